package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsOnTheirOwnAddress: the public handler has no /metrics; the
// metrics handler serves /metrics and /healthz and no page.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	if r := c.get("/metrics"); r.StatusCode != http.StatusNotFound {
		t.Errorf("public /metrics answered %d, want 404: %.200s", r.StatusCode, r.body)
	}
	if r := c.get("/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("public /healthz answered %d", r.StatusCode)
	}
	ops := httptest.NewServer(env.srv.MetricsHandler())
	defer ops.Close()
	oc := &client{t: t, base: ops.URL, hc: c.hc}
	for _, x := range []struct {
		path, body string
		code       int
	}{
		{"/metrics", "ctrljudge_queue_depth 0", http.StatusOK},
		{"/healthz", `"ok":true`, http.StatusOK},
		{"/", "", http.StatusNotFound},
		{"/exercises/171", "", http.StatusNotFound},
	} {
		r := oc.get(x.path)
		if r.StatusCode != x.code || !strings.Contains(r.body, x.body) {
			t.Errorf("metrics address %s answered %d, want %d with %q: %.200s", x.path, r.StatusCode, x.code, x.body, r.body)
		}
	}
}
