package ctrl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update-golden", false, "write testdata/wire.golden from the current codec")

// The wire codec is generated from the declarations (kinds_codec_gen.go), and
// a learner's module built before a change must still talk to the judge
// after it: the bytes of a rich set of objects, as the hand-written codec
// wrote them, are kept in testdata/wire.golden with the objects they
// decode to (as JSON, which pins which field each value lands in). Each
// must decode to its object and encode back to the same bytes.
//
// A new kind or field adds to the file: go test ./judge/ctrl -run Golden -update-golden,
// and check that the diff only adds lines.
func TestWireFormatIsGolden(t *testing.T) {
	const path = "testdata/wire.golden"
	if *updateGolden {
		var out bytes.Buffer
		for _, o := range goldenObjects() {
			out.WriteString(goldenLine(t, AppendObject(nil, o)))
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		var rec struct {
			Wire string
			Kind Kind
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		wire, err := base64.StdEncoding.DecodeString(rec.Wire)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		o, err := DecodeObject(wire)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if got := goldenLine(t, AppendObject(nil, o)); got != line {
			t.Fatalf("line %d: the object decodes and encodes again as\n%s\nnot\n%s", i+1, got, line)
		}
		if got := AppendObject(nil, DeepCopy(o)); !bytes.Equal(got, wire) {
			t.Fatalf("line %d: the copy encodes differently", i+1)
		}
	}
}

func goldenLine(t *testing.T, wire []byte) string {
	o, err := DecodeObject(wire)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(struct {
		Kind   Kind
		Wire   string
		Object Object
	}{o.GetObjectKind(), base64.StdEncoding.EncodeToString(wire), o})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// goldenObjects are the samples and objects of every field filled at
// random, from a fixed seed and fixed times.
func goldenObjects() []Object {
	r := rand.New(rand.NewPCG(3, 4))
	objs := sampleObjects()
	for range 12 {
		for _, k := range []Kind{KindDeployment, KindPod, KindConfigMap} {
			o := NewObject(k)
			fill(reflect.ValueOf(o).Elem(), r, &goldenValues)
			objs = append(objs, o)
		}
	}
	// Kinds added later draw from streams of their own, so that the lines
	// of the kinds before them stay as they were.
	for i, k := range []Kind{KindApp} {
		r := rand.New(rand.NewPCG(5, uint64(i)))
		for range 12 {
			o := NewObject(k)
			fill(reflect.ValueOf(o).Elem(), r, &goldenValues)
			objs = append(objs, o)
		}
	}
	return objs
}

// goldenValues are fill's values without time.Now and with longer strings
// now and then, for the long form of a length: the golden file's objects
// must be the same on every run.
var goldenValues = fillValues{
	times: func(r *rand.Rand) []time.Time {
		return []time.Time{{}, time.Unix(0, 0), time.Unix(-5, 0), time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), time.Unix(r.Int64N(1<<40), r.Int64N(1e9)).UTC()}
	},
	strings: []string{"", "a", "web-1", "ünï", strings.Repeat("x", 0x100)},
	ints:    []int64{0, 1, -3, 200, 1 << 20, -1 << 31},
}
