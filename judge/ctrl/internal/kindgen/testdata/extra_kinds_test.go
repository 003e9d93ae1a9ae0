package ctrl

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestExtraKinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		for _, k := range Kinds() {
			o := NewObject(k)
			fill(reflect.ValueOf(o).Elem(), r, &anyValues)
			b := AppendObject(nil, o)
			want, err := DecodeObject(b)
			if err != nil {
				t.Fatal(k, err)
			}
			if again := AppendObject(nil, want); !bytes.Equal(again, b) {
				t.Fatal(k, "re-encode")
			}
			got := DeepCopy(o)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: DeepCopy\n%#v\nround trip\n%#v", k, got, want)
			}
			if p := shared(reflect.ValueOf(got).Elem(), reflect.ValueOf(o).Elem(), "obj"); p != "" {
				t.Fatal(k, "shares", p)
			}
			// list decode through slabs: appending to one item's slices
			// must not touch another's
			items := []Object{want, want, want}
			reply := AppendReply(nil, OpList, &Reply{Items: items})
			var rr Reply
			if err := decodeReply(OpList, string(reply), nil, nil, &rr); err != nil || len(rr.Items) != 3 {
				t.Fatal(k, err)
			}
			x := rr.Items[0]
			mutate(reflect.ValueOf(x).Elem())
			for _, y := range rr.Items[1:] {
				if !bytes.Equal(AppendObject(nil, y), b) {
					t.Fatalf("%s: mutating item 0 changed another", k)
				}
			}
			if HasStatus(k) {
				c := DeepCopy(o)
				ClearStatus(c)
				CopyStatus(c, o)
				if !bytes.Equal(AppendObject(nil, c), b) {
					t.Fatal(k, "status copy")
				}
			}
		}
	}
	if apiVersionOf(KindJob) != "batch/v1" || apiVersionOf(KindLease) != "v1" {
		t.Fatal("apiVersion")
	}
	var jl JobList
	_ = jl
}

// mutate appends to every slice of structs and writes the first element.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			mutate(v.Field(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Slice:
		if v.Len() > 0 && v.Type().Elem().Kind() == reflect.Struct {
			for i := range v.Len() {
				mutate(v.Index(i))
			}
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "!")
		}
	}
}
