package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// protocolError is raised (as a panic, which wazero turns into the call's
// error) when a module breaks the host ABI.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "host ABI violation: " + e.msg }

// tableTrap is in wazero's error for a call through an empty or missing
// slot of the table, from its interpreter and its compiler alike
// (TestPrunedFunctionsLeaveTheTable).
const tableTrap = "invalid table access"

// prunedError is a pruned function's call: the module needs its whole
// code (prune.go).
type prunedError struct{ index uint32 }

func (e *prunedError) Error() string { return fmt.Sprintf("function %d is not compiled", e.index) }

// hostError wraps an error returned by Host.HandleCall.
type hostError struct{ err error }

func (e *hostError) Error() string { return e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

func instanceOf(ctx context.Context) *Instance {
	inst, _ := ctx.Value(instanceKey{}).(*Instance)
	if inst == nil {
		panic(&protocolError{"host call outside a judged call"})
	}
	return inst
}

// hostCall implements ctrljudge.call(op, msg, msgLen, buf, bufCap) -> len.
func hostCall(ctx context.Context, m api.Module, stack []uint64) {
	inst := instanceOf(ctx)
	op := api.DecodeU32(stack[0])
	if op == prunedOp {
		panic(&prunedError{api.DecodeU32(stack[1])})
	}
	msgPtr, msgLen := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	bufPtr, bufCap := api.DecodeU32(stack[3]), api.DecodeU32(stack[4])
	if msgLen > maxMessageBytes {
		panic(&protocolError{fmt.Sprintf("message of %d bytes", msgLen)})
	}
	view, ok := m.Memory().Read(msgPtr, msgLen)
	if !ok {
		panic(&protocolError{"message outside memory"})
	}
	msg := append([]byte(nil), view...) // the view dies with the next memory growth
	if inst.rec != nil {
		inst.rec.unfit = true // the host may answer differently next time
	}
	inst.pending = nil
	reply, err := inst.host.HandleCall(op, msg)
	if err != nil {
		panic(&hostError{err})
	}
	if len(reply) > maxMessageBytes {
		panic(&hostError{fmt.Errorf("sandbox: reply of %d bytes", len(reply))})
	}
	if uint32(len(reply)) <= bufCap {
		if !m.Memory().Write(bufPtr, reply) {
			panic(&protocolError{"reply buffer outside memory"})
		}
	} else {
		inst.pending = reply
	}
	stack[0] = api.EncodeU32(uint32(len(reply)))
}

// hostTake implements ctrljudge.take(buf, bufCap) -> len.
func hostTake(ctx context.Context, m api.Module, stack []uint64) {
	inst := instanceOf(ctx)
	bufPtr, bufCap := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if inst.rec != nil {
		inst.rec.unfit = true
	}
	if inst.pending == nil {
		panic(&protocolError{"take with no pending reply"})
	}
	if uint32(len(inst.pending)) > bufCap {
		panic(&protocolError{"take into a buffer too small"})
	}
	if !m.Memory().Write(bufPtr, inst.pending) {
		panic(&protocolError{"take buffer outside memory"})
	}
	stack[0] = api.EncodeU32(uint32(len(inst.pending)))
	inst.pending = nil
}

// fuelTrap is the TrapFuel err is, or nil: the meter's division by zero
// with nothing left.
func (inst *Instance) fuelTrap(err error) *Trap {
	if inst.fuel == nil || inst.flooded || inst.fuel.Get() != 0 || !strings.Contains(err.Error(), "integer divide by zero") {
		return nil // a flood empties the meter to stop the call: not a fuel trap
	}
	t := &Trap{Kind: TrapFuel, Steps: inst.limits.CallSteps, Total: inst.shared, Stack: wasmFrames(err.Error(), inst.names)}
	what := "a call"
	if inst.shared {
		what, t.Steps = "the calls in all", inst.limits.Steps.Max
	}
	t.Message = fmt.Sprintf("%s took more than %d steps of work", what, t.Steps)
	return t
}

// wasmFrames names the functions of wazero's stack trace in err, the
// innermost first, each once in a row; indices without a name stay as
// wazero wrote them.
func wasmFrames(err string, names map[int]string) []string {
	_, trace, ok := strings.Cut(err, "wasm stack trace:\n")
	if !ok {
		return nil
	}
	var frames []string
	for _, line := range strings.Split(trace, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, ".$") {
			continue
		}
		name := line[1:]
		if i := strings.IndexByte(name, '('); i > 0 {
			name = name[:i]
		}
		if idx, err := strconv.Atoi(name[1:]); err == nil {
			if n, ok := names[idx]; ok {
				name = n
			}
		}
		if len(frames) == 0 || frames[len(frames)-1] != name {
			frames = append(frames, name)
		}
	}
	return frames
}

// TrapKind says why a module stopped.
type TrapKind string

const (
	TrapPanic       TrapKind = "panic"   // the Go code panicked
	TrapFuel        TrapKind = "fuel"    // a call took more steps than its budget; see Steps
	TrapTimeout     TrapKind = "timeout" // a call ran past its wall-clock deadline (the machine may just be busy)
	TrapOutOfMemory TrapKind = "out_of_memory"
	TrapOutput      TrapKind = "output_limit" // the code wrote more than MaxOutputBytes
	TrapExit        TrapKind = "exit"         // the code called os.Exit
	TrapProtocol    TrapKind = "protocol"     // the module broke the host ABI
	TrapHost        TrapKind = "host"         // Host.HandleCall returned an error; see Err
	TrapWasm        TrapKind = "wasm"         // any other trap
	// TrapPruned: the code called a function compiled out of its module
	// (Config.Keep). Not the code's doing: run it again on Runtime.Whole.
	TrapPruned TrapKind = "pruned"
)

// Trap is a module that stopped abnormally. The instance is gone.
type Trap struct {
	Kind    TrapKind
	Message string // for panics, the panic value; otherwise a sentence
	Stack   []string
	Err     error // for TrapHost, the host's error
	// Steps, for TrapFuel, is the budget that ran out; Total says it was
	// the shared one (Limits.Steps) rather than the call's own.
	Steps int64
	Total bool
}

func (t *Trap) Error() string { return string(t.Kind) + ": " + t.Message }
func (t *Trap) Unwrap() error { return t.Err }

func (inst *Instance) classify(ctx context.Context, err error) error {
	var he *hostError
	if errors.As(err, &he) {
		return &Trap{Kind: TrapHost, Message: he.err.Error(), Err: he.err}
	}
	if inst.oom.seen {
		// Whatever stopped the runtime's report (its steps, the output
		// limit), running out of memory came first.
		return outOfMemory()
	}
	if t := inst.fuelTrap(err); t != nil {
		return t
	}
	var pr *prunedError
	if errors.As(err, &pr) {
		return &Trap{Kind: TrapPruned, Message: fmt.Sprintf("function %d was compiled out of the module", pr.index)}
	}
	if inst.emptySlots && strings.Contains(err.Error(), tableTrap) {
		// Go's code calls through the table only to functions that
		// exist; an empty slot is a stub's (prune.go, tableEdit).
		return &Trap{Kind: TrapPruned, Message: "a function compiled out of the module was called through the table"}
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return &Trap{Kind: TrapProtocol, Message: pe.msg}
	}
	if inst.flooded {
		return &Trap{Kind: TrapOutput, Message: fmt.Sprintf("the program wrote more than %d KiB of output", inst.limits.MaxOutputBytes>>10)}
	}
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		switch ee.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return &Trap{Kind: TrapTimeout, Message: fmt.Sprintf("a call ran longer than %v", inst.limits.CallTimeout)}
		case sys.ExitCodeContextCanceled:
			return ctx.Err() // the caller gave up; not the module's fault
		}
		if t := inst.stderrTrap(); t != nil {
			return t
		}
		return &Trap{Kind: TrapExit, Message: fmt.Sprintf("the program exited with status %d", ee.ExitCode())}
	}
	if t := inst.stderrTrap(); t != nil {
		return t
	}
	msg := err.Error()
	if i := strings.Index(msg, "\n"); i >= 0 {
		msg = msg[:i]
	}
	return &Trap{Kind: TrapWasm, Message: msg}
}

// stderrTrap reads the Go runtime's last words on stderr.
func (inst *Instance) stderrTrap() *Trap {
	s := inst.stderr.String()
	switch {
	case inst.oom.seen:
		return outOfMemory()
	case strings.Contains(s, "panic: "):
		i := strings.LastIndex(s, "panic: ")
		rest := s[i+len("panic: "):]
		msg, trace, _ := strings.Cut(rest, "\n\ngoroutine ")
		msg = strings.TrimSuffix(strings.TrimSpace(msg), " [recovered]")
		return &Trap{Kind: TrapPanic, Message: msg, Stack: goFrames(trace)}
	case strings.Contains(s, "fatal error: "):
		i := strings.LastIndex(s, "fatal error: ")
		msg, trace, _ := strings.Cut(s[i+len("fatal error: "):], "\n")
		return &Trap{Kind: TrapPanic, Message: "fatal error: " + msg, Stack: goFrames(trace)}
	}
	return nil
}

func outOfMemory() *Trap {
	return &Trap{Kind: TrapOutOfMemory, Message: fmt.Sprintf("the program used more than %d MiB", memoryLimitPages*64>>10)}
}

// oomWatch reads stderr, line by line, for the Go runtime's report that
// the program ran out of memory. The report goes on with a traceback of
// every goroutine, so a program that started thousands of them passes
// the output limit, and pushes the report out of the stderr tail, before
// the runtime exits: the report must be caught as it is written. Only a
// report written before the output limit was passed counts: a flood that
// came first is what stopped the program.
type oomWatch struct {
	inst *Instance
	line []byte // the line so far, while it could still be the report
	long bool   // the line is longer than the report
	seen bool
}

// oomReportBytes is more than any line of the report is long (the
// failed allocation's, with its two numbers, is under 100 bytes).
const oomReportBytes = 256

func (w *oomWatch) Write(p []byte) (int, error) {
	n := len(p)
	for !w.seen && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if w.long || len(w.line)+len(part) > oomReportBytes {
			w.long = true
		} else {
			w.line = append(w.line, part...)
		}
		if i < 0 {
			break
		}
		if !w.long && oomReport(string(w.line)) && !w.inst.flooded {
			w.seen = true
		}
		w.line, w.long = w.line[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// oomReport says whether a line of stderr is how the Go runtime says it
// ran out of memory: "fatal error: out of memory", or before it the
// allocation that failed, "runtime: out of memory: cannot allocate …".
func oomReport(line string) bool {
	line = strings.TrimPrefix(line, "fatal error: ")
	return line == "out of memory" || strings.HasPrefix(line, "runtime: out of memory")
}

// goFrames extracts "function\n\tfile:line" pairs from a Go traceback as
// "function (file:line)".
func goFrames(trace string) []string {
	lines := strings.Split(trace, "\n")
	var frames []string
	for i := 0; i+1 < len(lines); i++ {
		fn, loc := strings.TrimSpace(lines[i]), lines[i+1]
		if !strings.HasPrefix(loc, "\t") || fn == "" {
			continue
		}
		loc = strings.TrimSpace(loc)
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		if j := strings.LastIndex(fn, "("); j > 0 {
			fn = fn[:j]
		}
		frames = append(frames, fn+" ("+loc+")")
		i++
	}
	return frames
}
