package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"ctrljudge/judge/records"
	"ctrljudge/judge/report"
)

// cmdReport writes a class's report from a records file, offline.
func cmdReport(args []string) int {
	fs := flag.NewFlagSet("judge report", flag.ContinueOnError)
	db := dbFlag(fs)
	class := fs.String("class", "", "the class: its id, join code or name")
	format := fs.String("format", "csv", "csv (one row per learner), json, or html (one self-contained page)")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	threshold := fs.Float64("similarity", report.DefaultThreshold, "list code pairs from this similarity score (0 to 1)")
	dir := fs.String("exercises", "", "read exercises from `DIR` instead of the built-in ones")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		return fail("usage: judge report --db FILE --class C --format csv|json|html [--out FILE]")
	}
	if *format != "csv" && *format != "json" && *format != "html" {
		return fail("--format is csv, json or html, not %q", *format)
	}
	if *threshold <= 0 || *threshold > 1 {
		return fail("--similarity is a score above 0 and at most 1")
	}
	d, err := openRecords(*db)
	if err != nil {
		return fail("%v", err)
	}
	defer d.Close()
	ctx := context.Background()
	if *class == "" {
		return fail("give --class; the classes are:\n%s", classList(ctx, d))
	}
	cl, err := d.FindClass(ctx, *class)
	if err != nil {
		return fail("%v; the classes are:\n%s", err, classList(ctx, d))
	}
	cat, err := loadCatalog(*dir)
	if err != nil {
		// The records alone still make a report: exercises by slug, no starter exclusion.
		fmt.Fprintf(os.Stderr, "judge: exercises not loaded (%v); reporting without titles or starter code\n", err)
		cat = nil
	}
	in, err := report.Load(ctx, d, cl.ID, report.CatalogExercises(cat))
	if err != nil {
		return fail("%v", err)
	}
	r := report.Compute(in, report.Options{Threshold: *threshold})
	write := map[string]func(io.Writer) error{"csv": r.WriteCSV, "json": r.WriteJSON, "html": r.WriteHTML}[*format]
	if *out == "" {
		if err := write(os.Stdout); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	if err := writeFileAtomic(*out, write); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "judge: wrote the %s report of %q to %s\n", *format, cl.Name, *out)
	return 0
}

func classList(ctx context.Context, d *records.DB) string {
	cs, err := d.Classes(ctx)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	if len(cs) == 0 {
		return "  (none yet: an instructor creates classes on the instructor pages)"
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %d  %s  %q\n", c.ID, c.JoinCode, c.Name)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeFileAtomic writes through a temporary file in the same folder, so
// a failed run never leaves half a report in place of a good one.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
