package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"ctrljudge/judge/records"
)

// cmdMigrate copies a SQLite records file into an empty PostgreSQL
// database, ids, sessions and verdicts included, for a site moving from
// one machine to many. The server should be stopped first: rows written
// to the file after the copy's snapshot stay behind.
func cmdMigrate(args []string) int {
	fs := flag.NewFlagSet("judge migrate", flag.ContinueOnError)
	from := fs.String("from", "", "the SQLite records `FILE` to copy")
	to := fs.String("to", os.Getenv("CTRLJUDGE_DB"), "the PostgreSQL database `URL` to fill, e.g. postgres://judge@db/judge (env CTRLJUDGE_DB)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 || *from == "" || *to == "" {
		return usageErr("usage: judge migrate --from FILE --to postgres://…")
	}
	if records.IsURL(*from) || !records.IsURL(*to) {
		return usageErr("judge migrate copies a SQLite file (--from) into PostgreSQL (--to postgres://…); to copy PostgreSQL into a SQLite file, use judge backup")
	}
	src, err := openRecords(*from)
	if err != nil {
		return fail("%v", err)
	}
	defer src.Close()
	dst, err := records.Open(*to)
	if err != nil {
		return fail("%v", err)
	}
	defer dst.Close()
	counts, err := records.Copy(context.Background(), dst, src)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "judge: copied %s to %s: %d learners, %d submissions, %d sessions\n",
		*from, records.Redact(*to), counts["learners"], counts["submissions"], counts["sessions"])
	return 0
}
