package judge

import (
	"context"
	"strings"
	"testing"

	"ctrljudge/judge/verdict"
)

// The learner's module draws its map order from the test's seed, and a
// failure that passes under other runtime choices says so: here a
// controller that, in its first call after each start, returns a made-up
// error when a range over a map of eight entries starts at one of four of
// them.
func TestFailuresThatDependOnMapOrderSaySo(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	sol := string(ex.Solution)
	coin := strings.Replace(sol, "func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {", `var tossed bool

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	if !tossed {
		tossed = true
		for k := range map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8} {
			if k >= "e" {
				return ctrl.Result{}, errors.New("tails")
			}
			break
		}
	}`, 1)
	coin = strings.Replace(coin, "import (", "import (\n\t\"errors\"", 1)
	always := strings.Replace(coin, `k >= "e"`, `k != ""`, 1)
	var failed, passed, noted int
	for seed := uint64(1); seed <= 8; seed++ {
		v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: []byte(coin), FileName: "coin.go", Mode: verdict.ModeRun, Seed: seed})
		switch v.Outcome {
		case verdict.OutcomeAccepted:
			passed++
		case verdict.OutcomeWrongAnswer:
			failed++
			first := v.FirstFailure()
			if first.Oracle != verdict.OracleMadeUpError {
				t.Fatalf("seed %d: failed on %s, not made_up_error: %s", seed, first.Oracle, first.Message)
			}
			if strings.Contains(first.Message, otherChoicesNote) {
				noted++
			}
		default:
			t.Fatalf("seed %d: %s: %s", seed, v.Outcome, v.Summary())
		}
	}
	t.Logf("of 8 seeds: %d accepted, %d rejected, %d of them saying the runtime's choices decide", passed, failed, noted)
	if failed == 0 || noted == 0 {
		t.Errorf("the map's order should decide the verdict at some seed and say so: %d rejected, %d noted", failed, noted)
	}
	v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: []byte(always), FileName: "always.go", Mode: verdict.ModeRun, Seed: 1})
	if first := v.FirstFailure(); v.Outcome != verdict.OutcomeWrongAnswer || strings.Contains(first.Message, otherChoicesNote) {
		t.Errorf("a controller that fails whatever the order: %s, %q", v.Outcome, first.Message)
	}
}
