package sandbox

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Merging data segments must leave the memory a module starts with
// byte for byte as the linker laid it out, in far fewer segments.
func TestMergedDataLeavesMemoryAsBuilt(t *testing.T) {
	_, _ = module(t)
	merged := mergeData(testWasm)
	if bytes.Equal(merged, testWasm) {
		t.Fatal("a Go module's data segments were not merged")
	}
	count := func(m []byte) int {
		n, _ := uleb32(dataSectionBody(t, m))
		return int(n)
	}
	before, after := count(testWasm), count(merged)
	t.Logf("data segments: %d before, %d after; module %d → %d bytes", before, after, len(testWasm), len(merged))
	if after >= before/10 {
		t.Errorf("%d data segments merged into %d, want far fewer", before, after)
	}
	memory := func(wasm []byte) []byte {
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer rt.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		rt.NewHostModuleBuilder(hostModuleName).
			NewFunctionBuilder().WithFunc(func(uint32, uint32, uint32, uint32, uint32) uint32 { return 0 }).Export("call").
			NewFunctionBuilder().WithFunc(func(uint32, uint32) uint32 { return 0 }).Export("take").
			NewFunctionBuilder().WithFunc(func() int32 { return 0 }).Export("fuel").
			Instantiate(ctx)
		// No start function: the memory exactly as the data segments set it.
		mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := mod.Memory().Read(0, mod.Memory().Size())
		return append([]byte(nil), b...)
	}
	if a, b := memory(testWasm), memory(merged); !bytes.Equal(a, b) {
		t.Errorf("memory at start differs: %d and %d bytes", len(a), len(b))
	}
	// A module of another shape is left alone.
	for _, m := range [][]byte{nil, []byte("\x00asm\x01\x00\x00\x00"), testWasm[:len(testWasm)/2]} {
		if got := mergeData(m); !bytes.Equal(got, m) {
			t.Errorf("mergeData changed a module it cannot read (%d bytes)", len(m))
		}
	}
}

func dataSectionBody(t *testing.T, m []byte) []byte {
	for i := 8; i < len(m); {
		size, n := uleb32(m[i+1:])
		if m[i] == 11 {
			return m[i+1+n : i+1+n+int(size)]
		}
		i += 1 + n + int(size)
	}
	t.Fatal("no data section")
	return nil
}

// The cost of merging, paid at every compile of a new module:
//
//	go test -run '^$' -bench MergeData -benchtime 20x ./sandbox/
func BenchmarkMergeData(b *testing.B) {
	module(b)
	b.ReportAllocs()
	for b.Loop() {
		mergeData(testWasm)
	}
}
