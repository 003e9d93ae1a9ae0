package sandbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// randLearner shows what the Go runtime drew at random: the iteration
// order of a map of 20 built by a package initialiser (in the snapshot)
// and of one built by the call, which case of two ready ones a select
// takes, and math/rand's unseeded generator.
const randLearner = `package main

import (
	"fmt"
	"math/rand"
)

var built = build(20)

func build(n int) map[string]int {
	m := map[string]int{}
	for i := 0; i < n; i++ {
		m[fmt.Sprint("k", i)] = i
	}
	return m
}

var calls int

func next() int32 {
	calls++
	return int32(calls)
}

func order(m map[string]int) []int {
	var o []int
	for _, v := range m {
		o = append(o, v)
	}
	return o
}

func report() {
	a, b := make(chan int, 1), make(chan int, 1)
	var picks []byte
	for range 16 {
		a <- 1
		b <- 2
		select {
		case <-a:
			picks = append(picks, 'a')
			<-b
		case <-b:
			picks = append(picks, 'b')
			<-a
		}
	}
	fmt.Println("built", order(built), "fresh", order(build(20)), "select", string(picks), "rand", rand.Int63())
}
`

// Instances of one module under different random keys see different map
// orders, select choices and math/rand values, whether they ran
// _initialize or started from a snapshot; under the same key, the same,
// byte for byte, either way. The keys are interleaved, so an instance
// that started from another key's snapshot would show it.
func TestRandomKeyDecidesTheRuntimesChoices(t *testing.T) {
	rtOff, modOff := snapModuleOf(t, randLearner, true)
	rtOn, modOn := snapModuleOf(t, randLearner, false)
	keys := []uint64{0, 1, 2, 1 << 63}
	var starts []snapStart
	for round := range 3 {
		for _, k := range keys {
			starts = append(starts, snapStart{what: fmt.Sprintf("key %#x, %d", k, round), at: time.Duration(round) * time.Second,
				lim: Limits{Random: k}, calls: []string{"report", "next", "report"}})
		}
	}
	off := transcript(t, rtOff, modOff, starts)
	on := transcript(t, rtOn, modOn, starts)
	sameTranscripts(t, off, on)

	// What each key shows, after its name.
	shows := func(line string) string {
		i := strings.Index(line, ": ")
		if i < 0 || !strings.Contains(line, "built [") {
			t.Fatalf("no report: %s", line)
		}
		return line[i:]
	}
	for _, tr := range [][]string{off, on} {
		byKey := map[string]uint64{}
		for i, k := range keys {
			first := shows(tr[i])
			for round := 1; round < 3; round++ {
				if again := shows(tr[round*len(keys)+i]); again != first {
					t.Errorf("key %#x shows\n%s\nthen\n%s", k, first, again)
				}
			}
			if other, ok := byKey[first]; ok {
				t.Errorf("keys %#x and %#x show the same: %s", other, k, first)
			}
			byKey[first] = k
		}
	}
	// Two of every key's three started from its snapshot.
	if n := modOn.snaps.started.Load(); n != int64(2*len(keys)) {
		t.Errorf("%d instances started from a snapshot, want %d", n, 2*len(keys))
	}
	if len(modOn.snaps.keys) != len(keys) {
		t.Errorf("snapshots kept under %d random keys, want %d", len(modOn.snaps.keys), len(keys))
	}
}

// A module keeps snapshots for at most maxRandomKeysPerModule keys; an
// instance under a further key runs _initialize, and does what it would
// have done.
func TestRandomKeysPastTheBoundRunInitialize(t *testing.T) {
	rtOff, modOff := snapModuleOf(t, randLearner, true)
	rtOn, modOn := snapModuleOf(t, randLearner, false)
	var starts []snapStart
	for round := range 2 {
		for k := range uint64(maxRandomKeysPerModule + 2) {
			starts = append(starts, snapStart{what: fmt.Sprintf("key %d, %d", k, round), lim: Limits{Random: k}, calls: []string{"report"}})
		}
	}
	off := transcript(t, rtOff, modOff, starts)
	on := transcript(t, rtOn, modOn, starts)
	sameTranscripts(t, off, on)
	if n := modOn.snaps.started.Load(); n != maxRandomKeysPerModule {
		t.Errorf("%d instances started from a snapshot, want %d: one per key kept", n, maxRandomKeysPerModule)
	}
	if len(modOn.snaps.keys) != maxRandomKeysPerModule {
		t.Errorf("snapshots kept under %d random keys, want %d", len(modOn.snaps.keys), maxRandomKeysPerModule)
	}
}

// Key 0 is the stream every instance read before there were keys: ChaCha8
// under the constant key below, byte for byte. Any other key gives
// another stream, the same each time.
func TestRandomKeyZeroIsTheHistoricalStream(t *testing.T) {
	read := func(s interface{ Read([]byte) (int, error) }) []byte {
		b := make([]byte, 4096)
		if n, err := s.Read(b); n != len(b) || err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		return b
	}
	historical := read(rand.NewChaCha8([32]byte([]byte("the same random bytes everywhere"))))
	if got := read(newRandomStream(0)); !bytes.Equal(got, historical) {
		t.Fatalf("key 0 gives\n%x\nwant the historical\n%x", got[:32], historical[:32])
	}
	// The same, written out, should the constant above ever be edited.
	if got := hex.EncodeToString(historical[:16]); got != historicalStart {
		t.Errorf("the historical stream starts %s, want %s", got, historicalStart)
	}
	seen := map[string]uint64{string(historical): 0}
	for _, k := range []uint64{1, 2, 3, 1 << 32, 1 << 63, ^uint64(0)} {
		b := read(newRandomStream(k))
		if !bytes.Equal(b, read(newRandomStream(k))) {
			t.Errorf("key %#x gives two streams", k)
		}
		if other, ok := seen[string(b)]; ok {
			t.Errorf("keys %#x and %#x give the same stream", other, k)
		}
		seen[string(b)] = k
	}
	// Skipping moves a stream as reading does.
	s := newRandomStream(7)
	s.skip(1000)
	if b := read(newRandomStream(7)); !bytes.Equal(read(s)[:100], b[1000:1100]) {
		t.Error("skip(1000) is not reading 1000 bytes")
	}
}

// historicalStart is the first 16 bytes of the key-0 stream.
const historicalStart = "ea97c45bd1157767186431f09cbc9404"

// Limits left at their zero Random start as Limits{Random: 0} do, from
// _initialize and from the same snapshot.
func TestRandomUnsetIsKeyZero(t *testing.T) {
	rt, mod := snapModuleOf(t, randLearner, false)
	var outs []string
	for _, lim := range []Limits{{}, {Random: 0}, {}} {
		var buf bytes.Buffer
		lim.Output = &buf
		lim.Clock = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
		inst, err := mod.Instantiate(context.Background(), rt, &countingHost{}, lim)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inst.Call(context.Background(), "report"); err != nil {
			t.Fatal(err)
		}
		inst.Close(context.Background())
		outs = append(outs, buf.String())
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Errorf("unset and 0 differ:\n%s", strings.Join(outs, ""))
	}
	if n := mod.snaps.started.Load(); n != 2 || len(mod.snaps.keys) != 1 {
		t.Errorf("%d started from a snapshot under %d keys, want 2 under 1", n, len(mod.snaps.keys))
	}
}
