package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ctrlDir is package ctrl, which kindgen writes into.
const ctrlDir = "../.."

// The generated files are committed (the guest is built from them, and a
// reader of package ctrl should find the code): a change to the
// declarations or to kindgen without go generate fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generate(ctrlDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range outputs {
		want, ok := files[name]
		if !ok {
			t.Fatalf("kindgen wrote no %s", name)
		}
		got, err := os.ReadFile(filepath.Join(ctrlDir, name))
		if err != nil {
			t.Errorf("%v: run go generate ./judge/ctrl", err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("judge/ctrl/%s is out of date: run go generate ./judge/ctrl", name)
		}
	}
	stray, _ := filepath.Glob(filepath.Join(ctrlDir, "*_gen.go"))
	for _, path := range stray {
		if _, ok := files[filepath.Base(path)]; !ok {
			t.Errorf("%s is not kindgen's any more: delete it", path)
		}
	}
}

// The kinds to come use field types today's do not (pointers, slices of
// structs in slices, structs shared by kinds): testdata/extra_kinds.go
// declares some of each. They are added to a copy of package ctrl, and
// its generated codec and deep copy are held to round trips there.
func TestGeneratedCodeOfEveryFieldType(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of package ctrl")
	}
	dir := t.TempDir()
	names, err := filepath.Glob(filepath.Join(ctrlDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range names {
		base := filepath.Base(path)
		// The tests that hold sampleObjects, fill and shared come along;
		// the rest test the real kinds.
		if isOutput(base) || strings.HasSuffix(base, "_test.go") && base != "codec_test.go" && base != "deepcopy_test.go" {
			continue
		}
		copyFile(t, path, filepath.Join(dir, base))
	}
	copyFile(t, "testdata/extra_kinds.go", filepath.Join(dir, "extra_kinds.go"))
	copyFile(t, "testdata/extra_kinds_test.go", filepath.Join(dir, "extra_kinds_test.go"))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module ctrlcopy\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "ExtraKinds|DeepCopy|RoundTrip", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kindgen refuses what it cannot code, and a kind without its marks.
func TestRejects(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"//ctrl:kind wire=1\ntype K struct { ObjectMeta; X float64 }", "float64"},
		{"//ctrl:kind wire=1\ntype K struct { ObjectMeta; X map[string]int32 }", "map[string]int32"},
		{"//ctrl:kind\ntype K struct { ObjectMeta }", "wire=N"},
		{"//ctrl:kind wire=1\ntype K struct { X string }", "does not embed ObjectMeta"},
		{"//ctrl:kind wire=1\ntype K struct { ObjectMeta }\n//ctrl:kind wire=1\ntype L struct { ObjectMeta }", "both have wire=1"},
		{"//ctrl:kind wire=1\ntype K struct { ObjectMeta; Status string }", "Status is not a struct"},
		{"//ctrl:kind wire=1\ntype K struct { ObjectMeta; S []S }\ntype S struct { M ObjectMeta }", "ObjectMeta in a slice"},
		{"//ctrl:kind wire=1 size=3\ntype K struct { ObjectMeta }", "unknown"},
	} {
		dir := t.TempDir()
		src := "package ctrl\n\ntype ObjectMeta struct { Name string }\n\n" + c.src + "\n"
		if err := os.WriteFile(filepath.Join(dir, "types.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error saying %q", c.src, err, c.want)
		}
	}
}
