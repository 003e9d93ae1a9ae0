package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
)

func workspaceDir(ex *exercise.Exercise) string { return strconv.Itoa(ex.Number) + "-" + ex.Slug }

func cmdStart(args []string) int {
	fset, dir := newFlags("start")
	into := fset.String("dir", "", "write the workspace into `DIR` (default: ./NUMBER-SLUG)")
	ex, _, code := findExercise(fset, dir, args, 1, "start ID [--dir DIR]")
	if ex == nil {
		return code
	}
	root := *into
	if root == "" {
		root = workspaceDir(ex)
	}
	files := judge.ModuleFiles()
	files[ex.FileName()] = ex.Starter
	files["README.md"] = []byte(statementDoc(ex))
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var kept []string
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fail("%v", err)
		}
		// O_EXCL: never overwrite a learner's file.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			kept = append(kept, n)
			continue
		}
		if err != nil {
			return fail("%v", err)
		}
		_, err = f.Write(files[n])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	fmt.Printf("%s %s\n\n", bold(fmt.Sprintf("%d. %s", ex.Number, ex.Title)), dim("("+ex.Difficulty+")"))
	fmt.Printf("Workspace: %s/\n  README.md   the statement: what to write and what the tests check\n  %s   your code: edit this\n  %s   connects your Reconcile to the judge\n  sdk/   the ctrl package, for your editor (go build, go vet and gopls work offline)\n",
		root, ex.FileName(), "ctrljudge_main.go")
	for _, k := range kept {
		fmt.Printf("  kept your existing %s\n", k)
	}
	fmt.Printf("\nRead the statement in %s (or: judge show %d).\nThen: cd %s && judge test %d --run   (the sample tests)\n      judge test %d         (every test, faults included)\n",
		filepath.Join(root, "README.md"), ex.Number, shellWord(root), ex.Number, ex.Number)
	return 0
}
