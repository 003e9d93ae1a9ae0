// Package pgtest starts a real PostgreSQL server for tests: initdb into a
// temporary folder, the postmaster as a child of the test binary listening
// on a Unix socket in that folder only (no TCP port to collide on), and a
// fresh database per caller. As root it runs the server as an unprivileged
// user (PostgreSQL refuses root): $CTRLJUDGE_PG_USER, else "nobody".
//
// Nothing is skipped: a missing PostgreSQL fails the test, loudly, with
// what to install (`make test` installs Debian's postgresql where missing).
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

const (
	port         = 5432             // only names the socket file: no TCP listener
	startTimeout = 60 * time.Second // a busy machine starts slowly
	stopTimeout  = 30 * time.Second
)

// Server is a running PostgreSQL server for tests.
type Server struct {
	dir  string // data/ and the socket live here
	cmd  *exec.Cmd
	done chan error
	n    atomic.Int64 // databases created
}

// binDir finds PostgreSQL's server programs: on PATH, or in Debian's
// versioned folder, which is not on PATH.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
		return filepath.Dir(p), nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(ms) == 0 {
		return "", errors.New("pgtest: no PostgreSQL server programs (initdb) on PATH or in /usr/lib/postgresql/*/bin; install Debian's postgresql package (make test does)")
	}
	return filepath.Dir(ms[len(ms)-1]), nil
}

// credential is whom the server runs as: nil when not root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := os.Getenv("CTRLJUDGE_PG_USER")
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, PostgreSQL needs an unprivileged user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// staleAfter is how old a left-over server folder must be before Start
// removes it: one whose test binary was killed before it could clean up.
const staleAfter = time.Hour

// removeStale removes left-over server folders: older than staleAfter and
// with no live postmaster.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "ctrljudge-pg*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
			if err := syscall.Kill(pid, 0); pid > 0 && (err == nil || err == syscall.EPERM) {
				continue // still running
			}
		}
		os.RemoveAll(d)
	}
}

// Start initialises and starts a server in a new temporary folder.
func Start() (*Server, error) {
	removeStale()
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	// A short path: a Unix socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "ctrljudge-pg")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, done: make(chan error, 1)}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.Dir = dir
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return c
	}
	data := filepath.Join(dir, "data")
	var out bytes.Buffer
	initdb := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Run(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out.Bytes())
	}
	// Durability is not under test here: fsync off makes the server fast.
	s.cmd = run("postgres", "-D", data, "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// The server goes with the test binary, even if that is killed.
	s.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() { s.done <- s.cmd.Wait(); logf.Close() }()
	if err := s.waitReady(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady() error {
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-s.done:
			s.done <- werr
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("pgtest: postgres exited: %v\n%s", werr, log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after %s: %w", startTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is the address of database name on this server.
func (s *Server) URL(name string) string {
	q := url.Values{"host": {s.dir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Host: "localhost", Path: "/" + name, RawQuery: q.Encode()}).String()
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase() (string, error) {
	name := fmt.Sprintf("t%d", s.n.Add(1))
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return s.URL(name), nil
}

// Stop shuts the server down (fast mode) and removes its folder.
func (s *Server) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	return os.RemoveAll(s.dir)
}

var (
	shared    *Server
	sharedErr error
	sharedMu  sync.Mutex
)

// URL returns a fresh, empty database on the test binary's shared server,
// starting the server on first use. The package's TestMain must call
// StopShared after m.Run. Under -short, the fast inner loop, it skips the
// test instead.
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL; not with -short")
	}
	sharedMu.Lock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	s, err := shared, sharedErr
	sharedMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// StopShared stops the shared server, if one was started.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}
