package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
		add := pos[0] == "add"
		name, err := records.CleanName(pos[1])
		if err != nil {
			return fail("instructor name %q: %v", pos[1], err)
		}
		// Everything that can be checked is checked before the password
		// is asked for: nobody types one twice to learn of a typo.
		var d *records.DB
		var undo func()
		if add {
			// add may create the database: it is how a new site starts.
			d, undo, err = createRecords(*db)
		} else {
			d, err = openRecords(*db)
		}
		if err != nil {
			return fail("%v", err)
		}
		done := false
		defer func() {
			d.Close()
			if !done && undo != nil {
				undo()
			}
		}()
		ins, err := d.Instructors(ctx)
		if err != nil {
			return fail("%v", err)
		}
		exists := slices.ContainsFunc(ins, func(in *records.Instructor) bool { return in.Name == name })
		if add && exists {
			return fail("there is already an instructor named %q in %s; to change their password: judge instructor passwd %s", name, *db, shellWord(name))
		}
		if !add && !exists {
			return fail("no instructor named %q in %s; `judge instructor list` shows them", name, *db)
		}
		password, err := readPassword(os.Stdin, os.Stderr)
		if err != nil {
			return fail("%v", err)
		}
		if add {
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
		done = true
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

// createRecords opens the records database at path, creating it and its
// folder (0750) when missing. undo, if not nil, removes what was created,
// for when the command that needed it fails.
func createRecords(path string) (*records.DB, func(), error) {
	if records.IsURL(path) {
		d, err := records.Open(path)
		return d, nil, err
	}
	if _, err := os.Stat(path); err == nil {
		d, err := records.Open(path)
		return d, nil, err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	dir := filepath.Dir(path)
	_, err := os.Stat(dir)
	newDir := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("create a folder for the records: %w", err)
	}
	undo := func() {
		for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
			os.Remove(p)
		}
		if newDir {
			os.Remove(dir) // only if still empty
		}
	}
	d, err := records.Open(path)
	if err != nil {
		undo()
		return nil, nil, err
	}
	return d, undo, nil
}
