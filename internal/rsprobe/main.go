// Probe: does River's SQLite driver work with mattn/go-sqlite3?
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

type Args struct {
	N int `json:"n" river:"unique"`
}

func (Args) Kind() string { return "probe" }

type W struct {
	river.WorkerDefaults[Args]
	done *atomic.Int64
}

func (w *W) Work(ctx context.Context, j *river.Job[Args]) error { w.done.Add(1); return nil }

func main() {
	dir, _ := os.MkdirTemp("", "rsprobe")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "q.db")+"?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate")
	if err != nil {
		panic(err)
	}
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	drv := riversqlite.New(db)
	m, err := rivermigrate.New(drv, nil)
	if err != nil {
		panic(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		fmt.Println("migrate:", err)
		os.Exit(1)
	}
	var done atomic.Int64
	ws := river.NewWorkers()
	river.AddWorker(ws, &W{done: &done})
	c, err := river.NewClient(drv, &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, Workers: ws,
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	const n = 200
	start := time.Now()
	dups := 0
	for i := range n {
		if _, err := c.Insert(ctx, Args{N: i}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}); err != nil {
			fmt.Println("insert:", err)
			os.Exit(1)
		}
		r, err := c.Insert(ctx, Args{N: i}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			fmt.Println("insert unique:", err)
			os.Exit(1)
		}
		if r.UniqueSkippedAsDuplicate {
			dups++
		}
	}
	for done.Load() < 2*n-int64(dups) && time.Since(start) < 60*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	el := time.Since(start)
	c.Stop(ctx)
	fmt.Printf("riversqlite+mattn: %d jobs worked of %d inserted in %v (%.0f jobs/s), unique dups skipped %d\n", done.Load(), 2*n-dups, el, float64(done.Load())/el.Seconds(), dups)
}
