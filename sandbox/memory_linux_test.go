package sandbox

import (
	"bytes"
	"context"
	"testing"
)

// A memory handed on to the next instance is as a fresh one: what an
// instance left in it is gone, and the next starts exactly as the first.
func TestReusedMemoryStartsClean(t *testing.T) {
	rt, mod := module(t)
	snapshot := func(inst *Instance) []byte {
		mem := inst.mod.Memory()
		b, ok := mem.Read(0, mem.Size())
		if !ok {
			t.Fatal("cannot read the memory")
		}
		return append([]byte(nil), b...)
	}
	first := instance(t, Limits{})
	want := snapshot(first)
	// Leave a mark everywhere, as a module may before it is closed.
	mark := bytes.Repeat([]byte{0xAA}, int(first.mod.Memory().Size()))
	first.mod.Memory().Write(0, mark)
	first.Close(context.Background())
	for range 3 {
		inst, err := mod.Instantiate(context.Background(), rt, echoHost{}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := snapshot(inst); !bytes.Equal(got, want) {
			t.Fatalf("an instance started with %d bytes of memory unlike a fresh one's %d (%d bytes marked)", len(got), len(want), bytes.Count(got, []byte{0xAA}))
		}
		inst.Close(context.Background())
	}
}
