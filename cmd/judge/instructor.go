package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"ctrljudge/judge/records"
)

// cmdInstructor manages instructor accounts. There is no default account:
// each is added here with a password typed at the terminal or piped in.
func cmdInstructor(args []string) int {
	const usage = "usage: judge instructor add NAME | passwd NAME | list   [--db FILE]\n" +
		"  the password is read from the terminal (typed twice, not shown) or from the first line of standard input"
	fs := flag.NewFlagSet("judge instructor", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) == 0 {
		return fail("%s", usage)
	}
	ctx := context.Background()
	switch {
	case pos[0] == "list" && len(pos) == 1:
		d, err := openRecords(*db)
		if err != nil {
			return fail("%v", err)
		}
		defer d.Close()
		ins, err := d.Instructors(ctx)
		if err != nil {
			return fail("%v", err)
		}
		if len(ins) == 0 {
			fmt.Fprintln(os.Stderr, "judge: no instructors yet; add one with: judge instructor add NAME")
		}
		for _, in := range ins {
			cs, err := d.InstructorClasses(ctx, in.ID)
			if err != nil {
				return fail("%v", err)
			}
			fmt.Printf("%-24s added %s, %d class(es)\n", in.Name, in.CreatedAt.Format("2006-01-02"), len(cs))
		}
		return 0
	case (pos[0] == "add" || pos[0] == "passwd") && len(pos) == 2:
		name, err := records.CleanName(pos[1])
		if err != nil {
			return fail("instructor name: %v", err)
		}
		password, err := readPassword(os.Stdin, os.Stderr)
		if err != nil {
			return fail("%v", err)
		}
		// add may create the database: it is how a new site starts.
		var d *records.DB
		if pos[0] == "add" {
			d, err = records.Open(*db)
		} else {
			d, err = openRecords(*db)
		}
		if err != nil {
			return fail("%v", err)
		}
		defer d.Close()
		if pos[0] == "add" {
			if _, err := d.AddInstructor(ctx, name, password); err != nil {
				return fail("%v", err)
			}
			fmt.Fprintf(os.Stderr, "judge: added instructor %q to %s; sign in at /instructor/login\n", name, *db)
		} else {
			if err := d.SetInstructorPassword(ctx, name, password); err != nil {
				return fail("%v", err)
			}
			fmt.Fprintf(os.Stderr, "judge: changed the password of %q and ended their sessions\n", name)
		}
		return 0
	}
	return fail("%s", usage)
}

// readPassword reads a new password: typed twice without echo at a
// terminal, else the first line of in.
func readPassword(in *os.File, prompt io.Writer) (string, error) {
	if term.IsTerminal(int(in.Fd())) {
		fmt.Fprint(prompt, "Password (at least 10 characters): ")
		a, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		fmt.Fprint(prompt, "Again: ")
		b, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("the two passwords differ")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("no password on standard input (pipe one line, or run at a terminal)")
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty password")
	}
	return line, nil
}
