package integration

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath)) // judgeBinary's folder
	}
	os.Exit(code)
}

// Worker limits for the end-to-end test: a judgement cut short after
// jobTimeout is judged again, and a job running longer than rescueAfter
// is taken to be a dead worker's. Short, so that the kill -9 phase ends
// soon; far above a judgement here (about a second), so that no live
// worker's job is judged twice.
const (
	jobTimeout  = "60s"
	rescueAfter = "65s"
)

// proc is a judge process: a server or a worker.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  *syncBuffer
	base string // http://addr of its /healthz and /metrics
	id   string // a worker's id, from its first line
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProc runs the judge binary with args and waits for /healthz on addr.
func startProc(t testing.TB, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(judgeBinary(t), args...), log: &syncBuffer{}, base: "http://" + addr}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not answer within %v; its log:\n%s", args[:1], startTimeout, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var workerIDRE = regexp.MustCompile(`worker (\S+) judging`)

func startWorker(t testing.TB, dbURL string, slots int) *proc {
	t.Helper()
	addr := freePort(t)
	p := startProc(t, addr, "worker", "--db", dbURL, "--data", t.TempDir(), "--workers", strconv.Itoa(slots),
		"--metrics-addr", addr, "--job-timeout", jobTimeout, "--rescue-after", rescueAfter)
	if m := workerIDRE.FindStringSubmatch(p.log.String()); m != nil {
		p.id = m[1]
	} else {
		t.Fatalf("worker did not say its id:\n%s", p.log)
	}
	return p
}

// verdicts sums a process's ctrljudge_verdicts_total.
func (p *proc) verdicts() int {
	p.t.Helper()
	resp, err := http.Get(p.base + "/metrics")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "ctrljudge_verdicts_total{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// stream reads a submission's events until the final one.
func (l *learner) stream(ctx context.Context, id int64) ([]string, map[string]any, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/submissions/%d/events", l.base, id), nil)
	c := *l.c
	c.Timeout = 0 // a stream lasts as long as the line ahead of it
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var names []string
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[7:]
			names = append(names, name)
		case strings.HasPrefix(line, "data: ") && (name == "done" || name == "not_judged"):
			var d map[string]any
			err := json.Unmarshal([]byte(line[6:]), &d)
			return names, d, err
		}
	}
	return names, nil, fmt.Errorf("stream of %d ended without a final event: %v (%v)", id, names, sc.Err())
}

// entry is one piece of code, in one mode, with the verdict a single
// process (the CLI) gives it.
type entry struct {
	code, mode string
	want       string // canonical verdict JSON
}

// canonical re-encodes JSON, so that indentation does not count.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("verdict JSON %.200q: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// referenceVerdicts judges each entry with `judge test --json`: the
// single-process verdict the distributed one must equal.
func referenceVerdicts(t *testing.T, entries []entry) {
	t.Helper()
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := cat.Find(exerciseID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range entries {
		file := filepath.Join(dir, fmt.Sprint(i), ex.FileName())
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, []byte(entries[i].code), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"test", exerciseID, file, "--json", "--seed", strconv.FormatUint(judge.DefaultSeed, 10)}
		if entries[i].mode == "run" {
			args = append(args, "--run")
		}
		cmd := exec.Command(judgeBinary(t), args...)
		cmd.Env = append(os.Environ(), "CTRLJUDGE_DATA="+dir)
		out, err := cmd.Output()
		if len(out) == 0 {
			t.Fatalf("judge test %d: %v", i, err)
		}
		entries[i].want = canonical(t, out)
	}
}

type jobRow struct {
	attempt int
	state   string
	by      string // the workers that claimed it, in order, comma-separated
}

// riverJobs maps submission ids to their judge job's attempts and state.
func riverJobs(t *testing.T, db *sql.DB) map[int64]jobRow {
	t.Helper()
	rows, err := db.Query(`SELECT (args->>'submission_id')::bigint, attempt, state, array_to_string(attempted_by, ',')
		FROM river_job WHERE kind = 'judge'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]jobRow{}
	for rows.Next() {
		var id int64
		var r jobRow
		if err := rows.Scan(&id, &r.attempt, &r.state, &r.by); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	return out
}

// waitJobs waits until no judge job is waiting or running, and returns them all.
func waitJobs(t *testing.T, db *sql.DB) map[int64]jobRow {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		jobs := riverJobs(t, db)
		open := 0
		for _, j := range jobs {
			if j.state != "completed" && j.state != "cancelled" && j.state != "discarded" {
				open++
			}
		}
		if open == 0 {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d judge jobs still open after 5 minutes", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDistributedJudging: one server that judges nothing itself and two
// worker processes on one PostgreSQL. Twenty learners send a hundred
// submissions; each is judged exactly once (one River attempt, one
// stored verdict, counted once by the workers' metrics), its verdict is
// byte for byte the CLI's, and every learner sees the progress of its
// judgement. Then one worker is killed with SIGKILL while judging: every
// submission still ends judged, none twice.
func TestDistributedJudging(t *testing.T) {
	dbURL := pgtest.URL(t)
	cat, _ := exercise.LoadCatalog(exercises.FS, judge.Checks)
	ex, _ := cat.Find(exerciseID)
	entries := []entry{
		{code: string(ex.Starter), mode: "submit"},
		{code: string(ex.Solution), mode: "submit"},
		{code: string(ex.Starter), mode: "run"},
		{code: string(ex.Solution) + "\n// my own words\n", mode: "run"},
		{code: "package main\n\nfunc {\n", mode: "submit"},
	}
	referenceVerdicts(t, entries)

	srvAddr := freePort(t)
	srv := startProc(t, srvAddr, "serve", "--addr", srvAddr, "--metrics-addr", "", "--data", t.TempDir(), "--db", dbURL, "-judge=false", "--queue", "256")
	a := startWorker(t, dbURL, 1)
	b := startWorker(t, dbURL, 1)
	db, err := records.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	const clients, each = 20, 5
	learners := make([]*learner, clients)
	for i := range learners {
		learners[i] = newLearner(t, srv.base)
	}
	type sent struct {
		id    int64
		entry int
	}
	var mu sync.Mutex
	var all []sent
	sawProgress := make([]bool, clients)
	// run makes each learner send n submissions, one after another, each
	// followed on its event stream to the end.
	run := func(n, round int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for i, l := range learners {
			wg.Go(func() {
				for k := range n {
					e := (i + k + round) % len(entries)
					// All learners share one address, and so its rate
					// limit: a 429 is an answer, tried again a second later.
					var id int64
					var status int
					var err error
					for try := 0; id == 0 && err == nil && try < 60; try++ {
						if id, status, err = l.submit(entries[e].code, entries[e].mode); status == http.StatusTooManyRequests {
							time.Sleep(time.Second)
						}
					}
					if err != nil || id == 0 {
						t.Errorf("learner %d: submit answered %d, %v", i, status, err)
						return
					}
					mu.Lock()
					all = append(all, sent{id, e})
					mu.Unlock()
					names, final, err := l.stream(ctx, id)
					if err != nil {
						t.Errorf("learner %d: %v", i, err)
						return
					}
					if names[len(names)-1] != "done" {
						t.Errorf("learner %d, submission %d: stream %v, %v", i, id, names, final)
					}
					for _, n := range names {
						if n == "compiling" || n == "running" || n == "test" {
							sawProgress[i] = true
						}
					}
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	run(each, 0)
	elapsed := time.Since(start)
	if t.Failed() {
		t.Fatalf("server log:\n%s\nworker a:\n%s\nworker b:\n%s", srv.log, a.log, b.log)
	}
	check := func(phase string, wantClaims func(id int64, j jobRow) string) {
		t.Helper()
		ids := make([]int64, len(all))
		for i, s := range all {
			ids[i] = s.id
		}
		got := waitSettled(t, db, ids, &server{log: &bytes.Buffer{}})
		// River marks jobs completed in batches, after the verdict is
		// stored; a dead worker's job waits for the rescue.
		jobs := waitJobs(t, raw)
		for _, s := range all {
			sub := got[s.id]
			if sub.State != records.StateDone {
				t.Errorf("%s: submission %d is %s (%s)", phase, s.id, sub.State, sub.Note)
				continue
			}
			if g := canonical(t, sub.Verdict); g != entries[s.entry].want {
				t.Errorf("%s: submission %d's verdict differs from the CLI's:\n%s\nwant\n%s", phase, s.id, g, entries[s.entry].want)
			}
			var tests int
			raw.QueryRow("SELECT count(*) FROM test_results WHERE submission_id = $1", s.id).Scan(&tests)
			if tests != sub.Total {
				t.Errorf("%s: submission %d has %d test rows for %d tests: stored twice?", phase, s.id, tests, sub.Total)
			}
			j, ok := jobs[s.id]
			if want := wantClaims(s.id, j); !ok || j.state != "completed" || j.by != want || j.attempt != strings.Count(want, ",")+1 {
				t.Errorf("%s: submission %d's job: %+v (found %v); want completed, claimed by %s", phase, s.id, j, ok, want)
			}
		}
	}
	// One claim each, by whichever worker: judged once.
	check("two workers", func(_ int64, j jobRow) string {
		if j.by == a.id || j.by == b.id {
			return j.by
		}
		return "a or b"
	})
	if n := a.verdicts() + b.verdicts(); n != clients*each {
		t.Errorf("the workers stored %d verdicts for %d submissions", n, clients*each)
	}
	for i, saw := range sawProgress {
		if !saw {
			t.Errorf("learner %d saw no progress, only results", i)
		}
	}
	t.Logf("%d submissions from %d learners judged by 2 workers in %v (%.1f verdicts/s); worker a %d, worker b %d",
		clients*each, clients, elapsed.Round(time.Millisecond), float64(clients*each)/elapsed.Seconds(), a.verdicts(), b.verdicts())

	// kill -9 of worker a while it judges: wait until it holds a job.
	before := len(all)
	killed := map[int64]bool{}
	done := make(chan struct{})
	go func() { defer close(done); run(1, 1) }()
	deadline := time.Now().Add(2 * time.Minute)
	for len(killed) == 0 {
		// In flight: claimed by a, and not yet stored.
		rows, err := raw.Query(`SELECT s.id FROM river_job j JOIN submissions s ON s.id = (j.args->>'submission_id')::bigint
			WHERE j.kind = 'judge' AND j.state = 'running' AND j.attempted_by[array_length(j.attempted_by, 1)] = $1
			AND s.state = 'running'`, a.id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			killed[id] = true
		}
		rows.Close()
		if time.Now().After(deadline) {
			t.Fatalf("worker a took no job; its log:\n%s", a.log)
		}
		if len(killed) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	<-done
	if len(all) != before+clients {
		t.Fatalf("after the kill: %d submissions sent, want %d", len(all)-before, clients)
	}
	// A job worker a held when it died was claimed again by b, after the
	// rescue; any other was claimed once.
	rescued := 0
	check("after kill -9", func(id int64, j jobRow) string {
		switch {
		case j.by == a.id+","+b.id:
			rescued++
			return j.by
		case j.by == a.id || j.by == b.id:
			return j.by
		}
		return "a or b, or a then b"
	})
	for id := range killed {
		if j := riverJobs(t, raw)[id]; j.by != a.id+","+b.id {
			t.Errorf("submission %d, in flight on worker a when it was killed, was claimed by %s", id, j.by)
		}
	}
	t.Logf("killed worker a with %d judgement(s) in flight; %d rescued and judged by b; all %d submissions ended judged once",
		len(killed), rescued, len(all))

	// SIGTERM drains: worker b, idle now, leaves at once and cleanly.
	b.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("worker b after SIGTERM: %v\n%s", err, b.log)
		}
	case <-time.After(time.Minute):
		t.Errorf("worker b did not stop within a minute of SIGTERM:\n%s", b.log)
	}
	if h, err := http.Get(srv.base + "/healthz"); err == nil {
		body, _ := io.ReadAll(h.Body)
		h.Body.Close()
		if !strings.Contains(string(body), `"workers":0`) {
			t.Errorf("healthz once both workers are gone: %s", body)
		}
	}
}

// TestDistributedStartTogether: a server that judges nothing itself and
// three workers started at the same instant on an empty PostgreSQL
// database all come up, ten rounds in a row, each on a fresh database.
// Every process migrates the records and River's tables at start; done
// together without one lock, all but one died on duplicate catalog rows
// or on a trigger another process had not yet committed.
func TestDistributedStartTogether(t *testing.T) {
	const rounds, workers = 10, 3
	bin := judgeBinary(t)
	// One data folder per worker, kept across rounds: the toolchain is
	// warmed once, and each round races on the database, not on builds.
	data := make([]string, workers)
	for i := range data {
		data[i] = t.TempDir()
	}
	srvData := t.TempDir()
	for round := range rounds {
		dbURL := pgtest.URL(t)
		addrs := make([]string, workers+1)
		for i := range addrs {
			addrs[i] = freePort(t)
		}
		cmds := make([]*exec.Cmd, workers+1)
		logs := make([]*syncBuffer, workers+1)
		cmds[0] = exec.Command(bin, "serve", "--addr", addrs[0], "--metrics-addr", "", "--data", srvData, "--db", dbURL, "-judge=false")
		for i := 1; i <= workers; i++ {
			cmds[i] = exec.Command(bin, "worker", "--db", dbURL, "--data", data[i-1], "--workers", "1",
				"--metrics-addr", addrs[i], "--job-timeout", jobTimeout, "--rescue-after", rescueAfter)
		}
		exited := make([]chan struct{}, len(cmds))
		// All four are forked at once, released by one channel.
		var ready, started sync.WaitGroup
		gate := make(chan struct{})
		startErr := make([]error, len(cmds))
		for i, c := range cmds {
			logs[i] = &syncBuffer{}
			c.Stdout, c.Stderr = logs[i], logs[i]
			exited[i] = make(chan struct{})
			ready.Add(1)
			started.Go(func() {
				ready.Done()
				<-gate
				startErr[i] = c.Start()
			})
		}
		ready.Wait()
		close(gate)
		started.Wait()
		for i, c := range cmds {
			if startErr[i] != nil {
				t.Fatal(startErr[i])
			}
			go func() { c.Wait(); close(exited[i]) }()
		}
		stopAll := func() {
			for i, c := range cmds {
				c.Process.Kill()
				<-exited[i]
			}
		}
		name := func(i int) string {
			if i == 0 {
				return "server"
			}
			return fmt.Sprintf("worker %d", i)
		}
		// Each must answer /healthz; one that exits has lost the race.
		var wg sync.WaitGroup
		down := make([]string, len(cmds))
		for i := range cmds {
			wg.Go(func() {
				deadline := time.Now().Add(startTimeout)
				for {
					resp, err := http.Get("http://" + addrs[i] + "/healthz")
					if err == nil {
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							return
						}
					}
					select {
					case <-exited[i]:
						down[i] = fmt.Sprintf("exited (%v)", cmds[i].ProcessState)
						return
					default:
					}
					if time.Now().After(deadline) {
						down[i] = fmt.Sprintf("did not answer /healthz within %v", startTimeout)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		stopAll()
		for i, why := range down {
			if why != "" {
				t.Errorf("round %d: %s %s; its log:\n%s", round+1, name(i), why, logs[i])
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d rounds: a server and %d workers started together on an empty database, all up", rounds, workers)
}
