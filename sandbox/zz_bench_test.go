package sandbox

import (
	"context"
	"os"
	"testing"
	"time"
)

func BenchmarkZZStart(b *testing.B) {
	wasm, err := os.ReadFile(os.Getenv("WASM"))
	if err != nil {
		b.Skip()
	}
	for _, no := range []bool{false, true} {
		name := "snapshot"
		if no {
			name = "fresh"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			rt, _ := NewRuntime(ctx, Config{Interpreter: true, NoSnapshots: no})
			mod, _, _ := rt.Compile(ctx, wasm)
			clk := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
			for b.Loop() {
				inst, err := mod.Instantiate(ctx, rt, echoHost{}, Limits{Clock: clk})
				if err != nil {
					b.Fatal(err)
				}
				inst.Close(ctx)
			}
		})
	}
}
