package judge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

func newTestHost(t *testing.T) (*sim, *host) {
	ex := suite(t, fmt.Sprintf(deploymentYAML, 1, "v1"), "", "", "")
	s := newSim(context.Background(), nil, ex.Suite, ex.Suite.Tests[0], 1)
	return s, s.host
}

func TestHostAnswersRequestAndNow(t *testing.T) {
	s, h := newTestHost(t)
	h.begin("default/web")
	got, err := h.HandleCall(uint32(ctrl.OpRequest), nil)
	want := ctrl.AppendReply(nil, ctrl.OpRequest, &ctrl.Reply{Request: ctrl.Request{NamespacedName: ctrl.NamespacedName{Namespace: "default", Name: "web"}}})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("request: %q, %v; want %q", got, err, want)
	}
	s.clock.AdvanceTo(90 * time.Second)
	got, _ = h.HandleCall(uint32(ctrl.OpNow), nil)
	if want := ctrl.AppendReply(nil, ctrl.OpNow, &ctrl.Reply{Now: cluster.Epoch.Add(90 * time.Second)}); !bytes.Equal(got, want) {
		t.Fatal("now is not the virtual clock's")
	}
	// Both calls had empty messages: the traffic is their replies.
	if h.calls != 2 || h.traffic != len(got)+len(ctrl.AppendReply(nil, ctrl.OpRequest, &ctrl.Reply{Request: ctrl.Request{NamespacedName: ctrl.NamespacedName{Namespace: "default", Name: "web"}}})) {
		t.Fatalf("counted %d calls, %d bytes", h.calls, h.traffic)
	}
}

func TestHostRefusesUnknownOperations(t *testing.T) {
	s, h := newTestHost(t)
	h.begin("default/web")
	for _, op := range []uint32{0, uint32(ctrl.OpLimit), 1 << 20} {
		if _, err := h.HandleCall(op, nil); err == nil || errors.Is(err, errStop) {
			t.Errorf("op %d: %v, want a protocol error", op, err)
		}
	}
	if s.fail != nil {
		t.Fatalf("a protocol error is the trap's to report, not an oracle: %+v", s.fail)
	}
}

func TestHostBoundsCallsPerReconcile(t *testing.T) {
	s, h := newTestHost(t)
	h.begin("default/web")
	for i := 0; i < maxCallsPerReconcile; i++ {
		if _, err := h.HandleCall(uint32(ctrl.OpNow), nil); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if _, err := h.HandleCall(uint32(ctrl.OpNow), nil); !errors.Is(err, errStop) {
		t.Fatalf("call past the budget: %v", err)
	}
	if s.fail == nil || s.fail.oracle != verdict.OracleBudget || !strings.Contains(s.fail.message, "Reconcile #1 made more than 2000 calls") {
		t.Fatalf("failure %+v", s.fail)
	}
	// Once a test failed, every call stops the module.
	h.begin("default/web")
	if _, err := h.HandleCall(uint32(ctrl.OpNow), nil); !errors.Is(err, errStop) {
		t.Fatalf("call after a failure: %v", err)
	}
}

func TestHostBeginCountsReconciles(t *testing.T) {
	_, h := newTestHost(t)
	h.begin("default/a")
	h.calls, h.writes, h.result = 5, 2, &ctrl.Call{}
	h.traffic = 100
	h.begin("default/b")
	if h.reconciles != 2 || h.n != 2 || h.key != "default/b" || h.calls != 0 || h.writes != 0 || h.result != nil {
		t.Fatalf("after a second begin: %+v", h)
	}
	if h.traffic != 100 {
		t.Fatal("traffic is counted per test, not per reconcile")
	}
}

func TestHostBoundsTrafficPerTest(t *testing.T) {
	s, h := newTestHost(t)
	h.begin("default/web")
	h.traffic = text.MaxTrafficBytes - 1
	if _, err := h.HandleCall(uint32(ctrl.OpNow), nil); !errors.Is(err, errStop) {
		t.Fatalf("a reply past the traffic budget: %v", err)
	}
	if s.fail == nil || s.fail.oracle != verdict.OracleBudget || !strings.Contains(s.fail.message, "64 MiB") {
		t.Fatalf("failure %+v", s.fail)
	}
}
