package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"ctrljudge/judge/records/pgtest"
)

// TestMetricsAddress: `judge serve` answers /metrics on --metrics-addr
// only; the public address, which learners reach, says 404. The server
// here judges too (its own River worker, on PostgreSQL): the one metrics
// listener counts that worker's slots.
func TestMetricsAddress(t *testing.T) {
	maddr := freePort(t)
	srv := startServer(t, t.TempDir(), "--db", pgtest.URL(t), "--metrics-addr", maddr)
	defer srv.stop()
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(srv.base + "/metrics"); code != http.StatusNotFound {
		t.Errorf("public /metrics answered %d, want 404: %.200s", code, body)
	}
	if code, _ := get(srv.base + "/healthz"); code != http.StatusOK {
		t.Errorf("public /healthz answered %d", code)
	}
	code, body := get("http://" + maddr + "/metrics")
	if code != http.StatusOK || !strings.Contains(body, "ctrljudge_workers_alive 2") {
		t.Errorf("/metrics on --metrics-addr answered %d, want 200 counting the server's 2 slots: %.300s", code, body)
	}
	if code, body := get("http://" + maddr + "/healthz"); code != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Errorf("/healthz on --metrics-addr answered %d: %s", code, body)
	}
	if code, _ := get("http://" + maddr + "/"); code != http.StatusNotFound {
		t.Errorf("a page on --metrics-addr answered %d, want 404", code)
	}
}
