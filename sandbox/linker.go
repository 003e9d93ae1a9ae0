package sandbox

// Linker names the linker learners' builds run: the toolchain's own, on
// one P and with its collector set by linkGCEnv (RATIONALE.md, "Why the
// linker without its collector, on one P?").
func (b *Builder) Linker() string { return "the toolchain's linker" }
