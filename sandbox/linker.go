package sandbox

import (
	"context"
	"io"
)

// Linker names the linker learners' builds run: the toolchain's own, on
// one P and with its collector set by linkGCEnv (RATIONALE.md, "Why the
// linker without its collector, on one P?").
func (b *Builder) Linker() string { return "the toolchain's linker" }

// WarmLinker does nothing: learners' builds link with the toolchain's
// own linker, which needs no preparing.
//
// Deprecated: kept only until judge.Engine's Warm stops calling it.
func (b *Builder) WarmLinker(ctx context.Context, dir string, progress io.Writer) error {
	return nil
}
