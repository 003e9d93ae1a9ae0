package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"ctrljudge/judge/records"
)

// defaultRecords is where `judge serve` keeps its records by default.
func defaultRecords() string {
	if db := os.Getenv("CTRLJUDGE_DB"); db != "" {
		return db
	}
	dir := os.Getenv("CTRLJUDGE_DATA")
	if dir == "" {
		dir = "./data"
	}
	return filepath.Join(dir, "records.db")
}

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", defaultRecords(), "the records database: a SQLite `FILE` or a postgres:// URL (default: $CTRLJUDGE_DB, else records.db in $CTRLJUDGE_DATA or ./data)")
}

// openRecords opens an existing records database: reading commands must
// not leave an empty database behind a mistyped path.
func openRecords(path string) (*records.DB, error) {
	if records.IsURL(path) {
		return records.Open(path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no records database at %s (give --db FILE)", path)
	} else if err != nil {
		return nil, err
	}
	return records.Open(path)
}

// cmdBackup writes a consistent copy of the records while the server runs.
func cmdBackup(args []string) int {
	fs := flag.NewFlagSet("judge backup", flag.ContinueOnError)
	db := dbFlag(fs)
	out := fs.String("out", "", "write the copy to `FILE`, which must not exist")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 || *out == "" {
		return fail("usage: judge backup --db FILE --out FILE")
	}
	d, err := openRecords(*db)
	if err != nil {
		return fail("%v", err)
	}
	defer d.Close()
	if err := d.Backup(context.Background(), *out); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "judge: copied %s to %s\n", records.Redact(*db), *out)
	return 0
}
