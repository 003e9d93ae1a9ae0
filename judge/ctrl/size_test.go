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
