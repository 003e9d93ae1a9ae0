package judge

import (
	"slices"
	"testing"

	"ctrljudge/judge/ctrl"
)

// Interceptors wrap only the verbs they set, the last one added
// outermost, each calling on what it wraps; an unset verb passes through.
func TestInterceptorsWrapTheVerbsTheySet(t *testing.T) {
	var log []string
	base := func(name string) callFunc {
		return func(*ctrl.Call) (ctrl.Reply, error) { log = append(log, name); return ctrl.Reply{}, nil }
	}
	c := client{Get: base("get"), List: base("list"), Create: base("create"), Update: base("update"),
		UpdateStatus: base("update-status"), Delete: base("delete")}
	layer := func(name string) func(callFunc, *ctrl.Call) (ctrl.Reply, error) {
		return func(next callFunc, call *ctrl.Call) (ctrl.Reply, error) {
			log = append(log, name+">")
			r, err := next(call)
			log = append(log, "<"+name)
			return r, err
		}
	}
	c = c.with(writes(layer("inner"))).with(interceptor{Update: layer("outer")})
	for _, op := range []ctrl.Op{ctrl.OpGet, ctrl.OpUpdate, ctrl.OpDelete} {
		c.verb(op)(&ctrl.Call{Op: op})
	}
	want := []string{"get", "outer>", "inner>", "update", "<inner", "<outer", "inner>", "delete", "<inner"}
	if !slices.Equal(log, want) {
		t.Errorf("calls %v, want %v", log, want)
	}
	if c.verb(ctrl.OpLog) != nil || c.verb(ctrl.OpNow) != nil {
		t.Error("a call that does not reach the API has a verb")
	}
}
