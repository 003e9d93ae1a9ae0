package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestPagesAreGzipped(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	r := c.do(http.MethodGet, "/", "", map[string]string{"Accept-Encoding": "gzip"})
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("home: %d, Content-Encoding %q", r.StatusCode, r.Header.Get("Content-Encoding"))
	}
	sr := c.submit("171", "run", "package main")
	resp := c.open(sr.Events, map[string]string{"Accept-Encoding": "gzip"})
	defer resp.Body.Close()
	if enc := resp.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("event stream encoded %q", enc)
	}
}

func TestRunOnlyOneTest(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	ex, _ := env.cat.Find("171")
	name := ex.Suite.Tests[len(ex.Suite.Tests)-1].Name
	post := func(body map[string]string) response {
		return c.do(http.MethodPost, "/api/exercises/171/submissions", jsonBody(body), nil)
	}
	if r := post(map[string]string{"mode": "run", "code": "x", "only": "no such test"}); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.body, "no test named") {
		t.Errorf("unknown test: %d %s", r.StatusCode, r.body)
	}
	if r := post(map[string]string{"mode": "submit", "code": "x", "only": name}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("only with submit: %d %s", r.StatusCode, r.body)
	}
	r := post(map[string]string{"mode": "run", "code": "x " + solvedMarker, "only": name})
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("only %q: %d %s", name, r.StatusCode, r.body)
	}
	var sr submitResponse
	json.Unmarshal([]byte(r.body), &sr)
	c.events(sr.Events, nil)
	// One test never solves: stored as a run, progress tried at most.
	sub, err := env.db.Submission(t.Context(), sr.ID)
	if err != nil || sub.Mode != "run" {
		t.Fatalf("stored %+v, %v", sub, err)
	}
	if p, _ := env.db.Progress(t.Context(), sub.LearnerID); p[ex.Slug] == "solved" {
		t.Error("a run of one test solved the exercise")
	}
}

func TestAttemptIsTheLearnersOwn(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	sr := c.submit("171", "submit", "package main // mine "+solvedMarker)
	c.events(sr.Events, nil)
	r := c.get("/api/submissions/" + strconv.FormatInt(sr.ID, 10))
	var a attemptResponse
	if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &a) != nil || !strings.Contains(a.Code, "// mine") || !strings.Contains(a.HTML, "verdict") {
		t.Fatalf("own attempt: %d %.300s", r.StatusCode, r.body)
	}
	if !strings.Contains(a.HTML, `class="next"`) {
		t.Errorf("an accepted attempt has no next exercise link: %.400s", a.HTML)
	}
	other := env.client()
	other.submit("171", "run", "package main")
	for _, path := range []string{"/api/submissions/" + strconv.FormatInt(sr.ID, 10), "/api/submissions/x", "/api/submissions/999999"} {
		if r := other.get(path); r.StatusCode != http.StatusNotFound || strings.Contains(r.body, "// mine") {
			t.Errorf("%s for another learner: %d %.100s", path, r.StatusCode, r.body)
		}
	}
	if r := env.client().get("/api/submissions/" + strconv.FormatInt(sr.ID, 10)); r.StatusCode != http.StatusNotFound {
		t.Errorf("without a session: %d", r.StatusCode)
	}
}
