package ctrl

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// DeepCopy is written out for speed; what it must give is what a round
// trip through the codec gives, for every field of every kind, including
// what the wire drops (TypeMeta, zones, monotonic readings, empty slices).
func TestDeepCopyIsTheWireRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	objs := sampleObjects()
	epoch := time.Unix(0, 0)
	objs = append(objs, &Pod{ObjectMeta: ObjectMeta{CreationTimestamp: epoch, DeletionTimestamp: &epoch}})
	for range 500 {
		for _, k := range []Kind{KindDeployment, KindPod, KindConfigMap} {
			o := NewObject(k)
			fill(reflect.ValueOf(o).Elem(), r, &anyValues)
			objs = append(objs, o)
		}
	}
	for i, o := range objs {
		want, err := DecodeObject(AppendObject(nil, o))
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		got := DeepCopy(o)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("object %d: DeepCopy gives\n%#v\nthe round trip\n%#v", i, got, want)
		}
		if path := shared(reflect.ValueOf(got).Elem(), reflect.ValueOf(o).Elem(), "obj"); path != "" {
			t.Fatalf("object %d: the copy shares %s with the original", i, path)
		}
	}
}

// fillValues are the values fill draws from.
type fillValues struct {
	times   func(r *rand.Rand) []time.Time
	strings []string
	ints    []int64
}

// anyValues are fill's values for round trips: any time, any zone.
var anyValues = fillValues{
	times: func(r *rand.Rand) []time.Time {
		return []time.Time{{}, time.Unix(0, 0), time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)), time.Now(), time.Unix(r.Int64N(1<<40), r.Int64N(1e9))}
	},
	strings: []string{"", "a", "web-1", "ünï"},
	ints:    []int64{0, 1, -3, 1 << 20},
}

// fill sets every field of v to a value drawn from r: zero, empty or set.
func fill(v reflect.Value, r *rand.Rand, vals *fillValues) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		ts := vals.times(r)
		v.Set(reflect.ValueOf(ts[r.IntN(len(ts))]))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), r, vals)
		}
	case reflect.String:
		v.SetString(vals.strings[r.IntN(len(vals.strings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int32, reflect.Int64:
		v.SetInt(vals.ints[r.IntN(len(vals.ints))])
	case reflect.Pointer:
		if r.IntN(2) == 1 {
			p := reflect.New(v.Type().Elem())
			fill(p.Elem(), r, vals)
			v.Set(p)
		}
	case reflect.Map:
		switch r.IntN(3) {
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		case 2:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.IntN(3) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(k, r, vals)
				fill(e, r, vals)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Slice:
		switch r.IntN(3) {
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		case 2:
			s := reflect.MakeSlice(v.Type(), 1+r.IntN(3), 3)
			for i := range s.Len() {
				fill(s.Index(i), r, vals)
			}
			v.Set(s)
		}
	default:
		panic("fill: a field of kind " + v.Kind().String())
	}
}

// shared names a map, slice or pointer that a and b hold in common, or "".
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	case reflect.Map, reflect.Pointer:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return path
		}
		if a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() {
			return shared(a.Elem(), b.Elem(), path)
		}
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
	}
	return ""
}

// BenchmarkDeepCopy copies the sample objects written out, and by a round
// trip through the codec, as DeepCopy did before:
//
//	go test -run '^$' -bench DeepCopy -benchmem ./judge/ctrl/
func BenchmarkDeepCopy(b *testing.B) {
	objs := sampleObjects()
	b.Run("written", func(b *testing.B) {
		for b.Loop() {
			for _, o := range objs {
				DeepCopy(o)
			}
		}
	})
	b.Run("codec", func(b *testing.B) {
		for b.Loop() {
			for _, o := range objs {
				if _, err := DecodeObject(AppendObject(nil, o)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
