package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
)

const (
	startTimeout  = 60 * time.Second  // for the server to answer /healthz
	settleTimeout = 180 * time.Second // for every submission to reach a terminal state
	exerciseID    = "171"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// judgeBinary builds cmd/judge once per test run.
func judgeBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server; skipped with -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctrljudge-it-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "judge")
		out, err := exec.Command("go", "build", "-o", binPath, "ctrljudge/cmd/judge").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	log  *bytes.Buffer
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer runs `judge serve` on data and waits until it answers.
func startServer(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	addr := freePort(t)
	// No metrics listener unless asked for: tests start several servers
	// at once, and the default port would collide.
	args := append([]string{"serve", "--addr", addr, "--metrics-addr", "", "--data", data, "--workers", "2"}, extra...)
	s := &server{t: t, cmd: exec.Command(judgeBinary(t), args...), base: "http://" + addr, log: &bytes.Buffer{}}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer within %v; its log:\n%s", startTimeout, s.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill ends the server with SIGKILL: no shutdown code runs.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// stop ends the server with SIGTERM and waits.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		s.t.Errorf("server did not stop on SIGTERM; killing it")
		s.kill()
	}
}

// learner is one browser: its own cookies (session and CSRF token).
type learner struct {
	c    *http.Client
	base string
}

func newLearner(t testing.TB, base string) *learner {
	jar, _ := cookiejar.New(nil)
	l := &learner{c: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: base}
	resp, err := l.c.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return l
}

func (l *learner) csrf() string {
	u, _ := url.Parse(l.base)
	for _, c := range l.c.Jar.Cookies(u) {
		if c.Name == "cj_csrf" {
			return c.Value
		}
	}
	return ""
}

// submit sends code; it returns the submission id, or 0 and the status
// when the server refused (busy or shutting down).
func (l *learner) submit(code, mode string) (int64, int, error) {
	body, _ := json.Marshal(map[string]string{"code": code, "mode": mode})
	req, _ := http.NewRequest(http.MethodPost, l.base+"/api/exercises/"+exerciseID+"/submissions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.csrf())
	resp, err := l.c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return 0, resp.StatusCode, nil
	}
	var r struct {
		ID int64 `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.ID == 0 {
		return 0, resp.StatusCode, fmt.Errorf("submit answer without an id: %v", err)
	}
	return r.ID, resp.StatusCode, nil
}

func starterCode(t testing.TB) string {
	t.Helper()
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatalf("the built-in exercises do not load: %v", err)
	}
	ex, err := cat.Find(exerciseID)
	if err != nil {
		t.Fatalf("exercise %s: %v", exerciseID, err)
	}
	return string(ex.Starter)
}

// waitSettled polls the records until none of ids is queued or running.
func waitSettled(t testing.TB, db *records.DB, ids []int64, s *server) map[int64]*records.Submission {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(settleTimeout)
	for {
		got := map[int64]*records.Submission{}
		open := 0
		for _, id := range ids {
			sub, err := db.Submission(ctx, id)
			if err != nil {
				t.Fatalf("submission %d the server acknowledged is not in the records: %v", id, err)
			}
			got[id] = sub
			if sub.State == records.StateQueued || sub.State == records.StateRunning {
				open++
			}
		}
		if open == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d submissions still unfinished after %v; server log:\n%s", open, len(ids), settleTimeout, s.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
