package sandbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// guest is a trusted test program that drives the host ABI directly,
// including the ways a hostile module could misuse it.
const guest = `package main

import "unsafe"

//go:wasmimport ctrljudge call
func hostCall(op uint32, msg unsafe.Pointer, msgLen uint32, buf unsafe.Pointer, bufCap uint32) uint32

//go:wasmimport ctrljudge take
func hostTake(buf unsafe.Pointer, bufCap uint32) uint32

var small [8]byte
var large [256]byte

func call(op uint32, msg string) uint32 {
	b := []byte(msg)
	return hostCall(op, unsafe.Pointer(&b[0]), uint32(len(b)), unsafe.Pointer(&small[0]), uint32(len(small)))
}

//go:wasmexport echo_small
func echoSmall() uint32 {
	n := call(1, "hi")
	if string(small[:n]) != "hi!" {
		panic("bad reply " + string(small[:n]))
	}
	return n
}

//go:wasmexport echo_large
func echoLarge() uint32 {
	n := call(1, "a longer message than eight bytes")
	if n <= uint32(len(small)) {
		panic("expected a long reply")
	}
	m := hostTake(unsafe.Pointer(&large[0]), uint32(len(large)))
	if m != n || string(large[:m]) != "a longer message than eight bytes!" {
		panic("bad long reply")
	}
	return m
}

//go:wasmexport bad_pointer
func badPointer() uint32 {
	return hostCall(1, unsafe.Pointer(uintptr(0xfffffff0)), 64, unsafe.Pointer(&small[0]), 8)
}

//go:wasmexport bad_take
func badTake() uint32 { return hostTake(unsafe.Pointer(&large[0]), 8) }

//go:wasmexport host_fails
func hostFails() uint32 { return call(2, "x") }

//go:wasmexport spin
func spin() uint32 {
	n := uint32(0)
	for {
		n++
	}
}

//go:wasmexport flood
func flood() uint32 {
	for {
		println("flooding the host with output")
	}
}

func main() {}
`

type echoHost struct{}

var errHost = errors.New("host says no")

func (echoHost) HandleCall(op uint32, msg []byte) ([]byte, error) {
	if op == 2 {
		return nil, errHost
	}
	return append(msg, '!'), nil
}

var (
	setupOnce sync.Once
	testRT    *Runtime
	testMod   *Module
	testWasm  []byte
	setupErr  error
)

func module(t testing.TB) (*Runtime, *Module) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds WebAssembly; skipped with -short")
	}
	setupOnce.Do(func() {
		var b *Builder
		if b, setupErr = NewBuilder(); setupErr != nil {
			return
		}
		var wasm []byte
		wasm, setupErr = b.Build(context.Background(), Program{
			Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "guest.go": []byte(guest)},
			Main:     []byte("package main\n"),
			MainPath: "learner.go", MainName: "learner.go", Package: ".",
		})
		if setupErr != nil {
			return
		}
		if testRT, setupErr = NewRuntime(context.Background(), Config{}); setupErr != nil {
			return
		}
		testWasm = wasm
		testMod, _, setupErr = testRT.Compile(context.Background(), wasm)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return testRT, testMod
}

func instance(t *testing.T, lim Limits) *Instance {
	rt, mod := module(t)
	if lim.CallTimeout == 0 {
		lim.CallTimeout = 2 * time.Second
	}
	inst, err := mod.Instantiate(context.Background(), rt, echoHost{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestRepliesSmallAndLarge(t *testing.T) {
	inst := instance(t, Limits{})
	defer inst.Close(context.Background())
	for _, fn := range []string{"echo_small", "echo_large", "echo_small"} {
		if _, err := inst.Call(context.Background(), fn); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
	}
}

func TestABIMisuseTrapsTheModuleNotTheHost(t *testing.T) {
	for _, fn := range []string{"bad_pointer", "bad_take"} {
		inst := instance(t, Limits{})
		_, err := inst.Call(context.Background(), fn)
		var trap *Trap
		if !errors.As(err, &trap) || trap.Kind != TrapProtocol {
			t.Fatalf("%s: got %v, want a protocol trap", fn, err)
		}
		if _, err := inst.Call(context.Background(), "echo_small"); err == nil {
			t.Fatalf("%s: a trapped instance must be discarded", fn)
		}
	}
	// Other instances of the same module are unaffected.
	inst := instance(t, Limits{})
	if _, err := inst.Call(context.Background(), "echo_small"); err != nil {
		t.Fatal(err)
	}
}

func TestHostErrorsStopTheModule(t *testing.T) {
	inst := instance(t, Limits{})
	_, err := inst.Call(context.Background(), "host_fails")
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapHost || !errors.Is(err, errHost) {
		t.Fatalf("got %v", err)
	}
}

func TestEndlessLoopMeetsTheDeadline(t *testing.T) {
	// The deadline is set after start-up, which a loaded machine may take
	// longer than 200 ms to finish.
	inst := instance(t, Limits{})
	inst.limits.CallTimeout = 200 * time.Millisecond
	_, err := inst.Call(context.Background(), "spin")
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapTimeout {
		t.Fatalf("got %v", err)
	}
}

func TestOutputFloodIsStopped(t *testing.T) {
	var out bytes.Buffer
	inst := instance(t, Limits{Output: &out, MaxOutputBytes: 64 << 10})
	_, err := inst.Call(context.Background(), "flood")
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapOutput {
		t.Fatalf("got %v", err)
	}
	if out.Len() > 64<<10 || !strings.Contains(out.String(), "flooding") {
		t.Fatalf("kept %d bytes of output", out.Len())
	}
}

func TestCompileIsCachedByContent(t *testing.T) {
	rt, mod := module(t)
	_ = mod
	b, _ := NewBuilder()
	wasm, err := b.Build(context.Background(), Program{
		Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "guest.go": []byte(guest)},
		Main:     []byte("package main\n"),
		MainPath: "learner.go", MainName: "learner.go", Package: ".",
	})
	if err != nil {
		t.Fatal(err)
	}
	again, cached, err := rt.Compile(context.Background(), wasm)
	if err != nil || !cached || again != mod {
		t.Fatalf("rebuilt identical source: cached=%v same=%v err=%v (builds must be reproducible)", cached, again == mod, err)
	}
}

func TestModulesMayImportOnlyWASIAndTheHost(t *testing.T) {
	rt, _ := module(t)
	b, _ := NewBuilder()
	wasm, err := b.Build(context.Background(), Program{
		Files: map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "guest.go": []byte(`package main

//go:wasmimport env escape
func escape() uint32

//go:wasmexport run
func run() uint32 { return escape() }

func main() {}
`)},
		Main: []byte("package main\n"), MainPath: "learner.go", MainName: "learner.go", Package: ".",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rt.Compile(context.Background(), wasm); err == nil || !strings.Contains(err.Error(), "env.escape") {
		t.Fatalf("a module importing env.escape compiled: %v", err)
	}
}

func TestUntrustedSourceIsVetted(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"package main\n\nimport \"C\"\n", `import "C" (cgo) is not allowed`},
		{"package main\n\n//go:wasmimport ctrljudge call\nfunc f()\n", "//go:wasmimport directives are not allowed"},
		{"package main\n\n//go:linkname x runtime.x\nvar x int\n", "//go:linkname directives are not allowed"},
		{"//go:build ignore\n\npackage main\n", "//go:build directives are not allowed"},
		{"package main\n\nimport \"example.com/x\"\n", `import "example.com/x" is not allowed`},
		{"package main\n\nimport \"internal/abi\"\n", `import "internal/abi" is not allowed`},
	} {
		err := vetSource(Program{Main: []byte(c.src), MainName: "learner.go", Allowed: []string{"ctrljudge/judge/ctrl"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	big := Program{Main: bytes.Repeat([]byte("/"), MaxSourceBytes+1), MainName: "learner.go"}
	b := &Builder{}
	if _, err := b.Build(context.Background(), big); err == nil || !strings.Contains(err.Error(), "limit is 64 KiB") {
		t.Errorf("oversized source: %v", err)
	}
}

// The cache keeps at most maxCachedModules compiled modules that nobody
// holds, so a long-running judge does not keep the code of every module it
// ever compiled (each holds tens of MiB of heap): the least recently used
// one is closed; one still held is never evicted, and compiling its bytes
// again finds it.
func TestCachedModulesAreBoundedAndClosed(t *testing.T) {
	module(t)
	rt, err := NewRuntime(context.Background(), Config{Interpreter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	// Distinct bytes, same code: an empty custom section named by i.
	variant := func(i int) []byte {
		return append(append([]byte(nil), testWasm...), 0, 4, 2, byte('a'+i%26), byte('a'+i/26), 0)
	}
	compile := func(i int) *Module {
		m, _, err := rt.Compile(context.Background(), variant(i))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	held := compile(0)
	first := compile(1)
	rt.Release(first)
	var released []*Module
	for i := 2; i <= maxCachedModules; i++ {
		m := compile(i)
		rt.Release(m)
		released = append(released, m)
	}
	if first.entry.mod == nil {
		t.Fatal("a module was closed before more than maxCachedModules were unused")
	}
	m := compile(maxCachedModules + 1)
	rt.Release(m)
	if first.entry.mod != nil {
		t.Error("the least recently used module was not closed")
	}
	again, cached, err := rt.Compile(context.Background(), variant(0))
	if err != nil || !cached || again != held {
		t.Fatalf("a held module was compiled again (cached %v, same %v, %v)", cached, again == held, err)
	}
	rt.Release(again)
	inst, err := held.Instantiate(context.Background(), rt, echoHost{}, Limits{})
	if err != nil {
		t.Fatalf("a held module stopped working: %v", err)
	}
	if _, err := inst.Call(context.Background(), "echo_small"); err != nil {
		t.Fatal(err)
	}
	inst.Close(context.Background())
	// Released, the held module is the most recently used: the oldest
	// unused one goes instead.
	rt.Release(held)
	if held.entry.mod == nil {
		t.Error("the most recently used module was closed")
	}
	if released[0].entry.mod != nil {
		t.Error("the least recently used module was not closed")
	}
}
