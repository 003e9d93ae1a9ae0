package ctrl

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The SDK is built into every learner module: fmt, encoding/json and
// reflect would each add most of a megabyte and slow every compile.
func TestSDKAvoidsHeavyPackages(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list gave %q", out)
	}
	for _, d := range deps {
		switch d {
		case "fmt", "encoding/json", "reflect":
			t.Errorf("the SDK depends on %s", d)
		}
	}
}

// Decoding is most of what the SDK does in a learner's module, and str
// and count most of decoding: a call to either costs more in the
// interpreter than the work, so they must stay within the compiler's
// inlining budget (codec.go).
func TestDecoderInlines(t *testing.T) {
	cmd := exec.Command("go", "build", "-gcflags=-m", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	inlined := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if _, f, ok := strings.Cut(line, ": can inline "); ok {
			inlined[f] = true
		}
	}
	for _, f := range []string{"(*decoder).str", "(*decoder).count"} {
		if !inlined[f] {
			t.Errorf("%s is not inlined any more; go build -gcflags=-m=2 says why", f)
		}
	}
}
