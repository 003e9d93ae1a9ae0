package family

import (
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/verdict"
)

// A Family is the model of one exercise family: its desired state and
// safety rules, the part of an exercise that is easier said in Go than in
// data. tests.yaml names it as its model; judge/models.go lists them.
type Family interface {
	// Converged says whether the world is in the desired state, and if
	// not, why, in plain words.
	Converged(w World) (bool, string)
	// CheckWrite checks the safety invariants right after a controller
	// write and returns a violation in plain words, or "", and for a bound
	// on a count, the count and the bound (its Step is the engine's).
	CheckWrite(w World, wr *Write) (string, *verdict.Violation)
	// Sample measures the world for the timeline.
	Sample(w World) (desired, actual, ready int)
	// Detail renders what matters about a written object ("v2" for a Pod:
	// its image), for write sequences.
	Detail(o ctrl.Object) string
}

// World is the read-only view of the cluster a model checks.
type World interface {
	List(k ctrl.Kind) []ctrl.Object
	Get(k ctrl.Kind, ns, name string) ctrl.Object
}

// A Clocked world also tells the cluster's time, for a model whose
// desired state depends on it (a deadline that has passed). The engine's
// worlds are Clocked.
type Clocked interface {
	Now() time.Time
}

// Write is one controller write, as applied.
type Write struct {
	Verb   string      // create, update, update-status, delete
	Object ctrl.Object // after the write (for delete: before)
	Before ctrl.Object // the stored object before the write, or nil
	Now    time.Time   // the cluster's clock at the write (what ctrl.Now gives)
}

// A Describer says what matters about a test's object to its family, for
// the trace's first lines ("the test starts with ...").
type Describer interface {
	Describe(o ctrl.Object) string
}

// A Hinter words the hint for a failed oracle in its family's terms.
type Hinter interface {
	Hint(oracle verdict.Oracle) string
}
