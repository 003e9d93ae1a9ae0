// Command judge is ctrljudge's command line: list exercises, start a
// workspace, judge a file locally with the same engine as the server,
// check exercises as an author, and run the server.
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
)

type command struct {
	run   func(args []string) int
	usage string
}

var commands = map[string]command{
	"list":       {cmdList, "list                      the exercises: number, title, difficulty, chapter"},
	"start":      {cmdStart, "start ID [--dir DIR]      write a workspace: the statement (README.md), starter file, go.mod, the SDK"},
	"show":       {cmdShow, "show ID                   the statement: what to write and what the tests check"},
	"test":       {cmdTest, "test ID [FILE]            judge FILE (default: the workspace file); --run for samples only, --seed N, --test NAME, --faults LIST, --json; --list lists the tests"},
	"solution":   {cmdSolution, "solution ID               print the reference solution and its explanation"},
	"check":      {cmdCheck, "check [ID...]             author's gate: solutions pass, starters and mutants fail, generated scenarios cover the input space"},
	"regress":    {cmdRegress, "regress --exercises DIR ID FILE... [--seeds A-B]  keep, as a regression scenario, what rejects FILE at some seeds only"},
	"doctor":     {cmdDoctor, "doctor                    check the Go toolchain, the wasip1 build and the wasm runtime"},
	"serve":      {cmdServe, "serve [--addr A] [--data DIR] [--db URL] [--public-url URL] [--trusted-proxy CIDR] [--metrics-addr A]  run the web server (records in DIR/records.db, or PostgreSQL; /metrics on A only)"},
	"report":     {cmdReport, "report --db F --class C --format csv|json|html [--out F]  grading reports, offline"},
	"backup":     {cmdBackup, "backup --db F --out F     an online copy of the records (a SQLite file, from either database)"},
	"worker":     {cmdWorker, "worker --db postgres://… [--workers N]  judge from the server's PostgreSQL queue, no pages (/healthz, /metrics)"},
	"migrate":    {cmdMigrate, "migrate --from FILE --to postgres://…  move SQLite records into an empty PostgreSQL database"},
	"instructor": {cmdInstructor, "instructor add NAME | list   manage instructor accounts"},
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(os.Stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "judge: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return c.run(args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: judge COMMAND [ARGS]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(w, "  "+commands[n].usage)
	}
	fmt.Fprintln(w, "\nIDs are exercise numbers (171) or slugs (reconcile-loop).\nEvery command takes --exercises DIR to use another exercise folder.")
}

// parseFlags parses flags wherever they stand among the arguments and
// returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("judge "+name, flag.ContinueOnError)
	dir := fs.String("exercises", "", "read exercises from `DIR` instead of the built-in ones")
	return fs, dir
}

func loadCatalog(dir string) (*exercise.Catalog, error) {
	var fsys fs.FS = exercises.FS
	if dir != "" {
		fsys = os.DirFS(dir)
	}
	return exercise.LoadCatalog(fsys, judge.Checks)
}

// findExercise parses args and finds the exercise the first positional
// argument names; maxPos bounds the positional arguments. A non-zero code
// means the caller should return it.
func findExercise(fs *flag.FlagSet, dir *string, args []string, maxPos int, usage string) (*exercise.Exercise, []string, int) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, nil, 2
	}
	if len(pos) < 1 || len(pos) > maxPos {
		return nil, nil, usageErr("usage: judge %s", usage)
	}
	if ex := loadOne(*dir, pos[0]); ex != nil {
		return ex, pos[1:], 0
	}
	cat, err := loadCatalog(*dir)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	ex, err := cat.Find(pos[0])
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	return ex, pos[1:], 0
}

// loadOne loads just the exercise id names, found by its folder's name
// (NUMBER-SLUG), so that a command about one exercise does not parse
// every other's statement and tests first. It returns nil when no single
// folder is that exercise's; the whole catalog then decides, and reports.
func loadOne(dir, id string) *exercise.Exercise {
	var fsys fs.FS = exercises.FS
	if dir != "" {
		fsys = os.DirFS(dir)
	}
	id = strings.TrimPrefix(strings.TrimSpace(id), "#")
	if id == "" {
		return nil
	}
	var found []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		num, slug, ok := strings.Cut(d.Name(), "-")
		if ok && (num == id || slug == id) {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		return nil
	}
	ex, err := exercise.LoadExercise(fsys, found[0], judge.Checks)
	if err != nil || (strconv.Itoa(ex.Number) != id && ex.Slug != id) {
		return nil
	}
	return ex
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "judge: "+format+"\n", args...)
	return 1
}

// usageErr reports a command typed wrongly: exit code 2, as for a bad flag.
func usageErr(format string, args ...any) int {
	fail(format, args...)
	return 2
}

func cmdList(args []string) int {
	fs, dir := newFlags("list")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	cat, err := loadCatalog(*dir)
	if err != nil {
		return fail("%v", err)
	}
	for _, ch := range cat.Chapters {
		fmt.Printf("%s\n", ch.Title)
		for _, e := range ch.Exercises {
			fmt.Printf("  %4d  %-36s %-7s %s\n", e.Number, e.Title, e.Difficulty, dim(e.Chapter))
		}
	}
	return 0
}

func cmdSolution(args []string) int {
	fs, dir := newFlags("solution")
	ex, _, code := findExercise(fs, dir, args, 1, "solution ID")
	if ex == nil {
		return code
	}
	fmt.Printf("%s\n\n%s\n", bold(fmt.Sprintf("%d. %s — explanation", ex.Number, ex.Title)), strings.TrimSpace(ex.Explanation))
	fmt.Printf("\n%s\n\n%s", bold("Reference solution ("+ex.FileName()+")"), ex.Solution)
	return 0
}
