package cluster

import (
	"bytes"
	"encoding/json"

	"ctrljudge/judge/ctrl"
)

// MergePatch applies a JSON merge patch (RFC 7386) to a copy of o.
func MergePatch(o ctrl.Object, patch map[string]any) (ctrl.Object, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	merged := mergeValue(doc, patch)
	if b, err = json.Marshal(merged); err != nil {
		return nil, err
	}
	next := ctrl.NewObject(o.GetObjectKind())
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(next); err != nil {
		return nil, err
	}
	return next, nil
}

func mergeValue(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergeValue(t[k], v)
		}
	}
	return t
}
