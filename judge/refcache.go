package judge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"ctrljudge/judge/ctrl"
)

// The reference's observations also live on disk, under
// CacheDir/reference/, one file per referee key (a SHA-256 of the engine
// version, the solution, the suite's setup, the test and the seed, so the
// name is ours and never the learner's). A CLI run is a new process each
// time: without them it would build, compile and run the solution on every
// test before judging a line of the learner's. A file that cannot be read
// back whole, or was written for another key, is ignored and replaced.

// referenceDir holds the stored observations; its name changes with
// their shape, so that a file of another shape is never read as this one.
const referenceDir = "reference-2"

// The observation as stored: exported mirrors of its parts.
type (
	storedObservation struct {
		Key    string
		Passed bool
		Writes []storedWrite
		Cut    bool
		World  string
		End    []storedObject
		// Results are the calls' results, where the exercise compares them.
		Results []string `json:",omitempty"`
	}
	storedWrite struct {
		Verb string
		Obj  storedObject
	}
	storedObject struct {
		Kind      ctrl.Kind
		NS, Name  string
		Generated bool
		Words     string
		Fields    []storedField
	}
	storedField struct {
		Path  []string
		Value string
	}
)

func storeObject(o *flatObject) storedObject {
	s := storedObject{Kind: o.kind, NS: o.ns, Name: o.name, Generated: o.generated, Words: o.words}
	for _, f := range o.fields {
		s.Fields = append(s.Fields, storedField{Path: f.path, Value: f.value})
	}
	return s
}

func (s *storedObject) flat() flatObject {
	o := flatObject{kind: s.Kind, ns: s.NS, name: s.Name, generated: s.Generated, words: s.Words}
	for _, f := range s.Fields {
		o.fields = append(o.fields, field{path: f.Path, value: f.Value})
	}
	return o
}

func (e *Engine) referencePath(key string) string {
	if e.cacheDir == "" || key == "" {
		return ""
	}
	return filepath.Join(e.cacheDir, referenceDir, key+".json")
}

// loadReference reads the observation stored for key, if there is one.
func (e *Engine) loadReference(key string) (*observation, bool) {
	path := e.referencePath(key)
	if path == "" {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var s storedObservation
	if err := json.Unmarshal(b, &s); err != nil || s.Key != key {
		return nil, false
	}
	o := &observation{passed: s.Passed, world: s.World, cut: s.Cut, results: s.Results}
	for i := range s.Writes {
		o.writes = append(o.writes, observedWrite{verb: s.Writes[i].Verb, obj: s.Writes[i].Obj.flat()})
	}
	for i := range s.End {
		o.end = append(o.end, s.End[i].flat())
	}
	return o, true
}

// saveReference stores o for key, whole or not at all: it is written to a
// temporary file and renamed into place. A failure only costs a later run.
func (e *Engine) saveReference(key string, o *observation) {
	path := e.referencePath(key)
	if path == "" {
		return
	}
	s := storedObservation{Key: key, Passed: o.passed, World: o.world, Cut: o.cut, Results: o.results}
	for i := range o.writes {
		s.Writes = append(s.Writes, storedWrite{Verb: o.writes[i].verb, Obj: storeObject(&o.writes[i].obj)})
	}
	for i := range o.end {
		s.End = append(s.End, storeObject(&o.end[i]))
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return
	}
	f, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}
