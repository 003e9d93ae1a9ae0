package report

import "ctrljudge/judge/exercise"

// CatalogExercises is what reports need to know of the catalog's
// exercises, for the server and `judge report` alike; cat may be nil.
//
// The catalog still lives in package judge, beside the engine, so this
// file links the engine into the package for now; it takes only Catalog
// and Exercise's fields, and goes with the catalog to judge/exercise.
func CatalogExercises(cat *exercise.Catalog) []Exercise {
	if cat == nil {
		return nil
	}
	out := make([]Exercise, len(cat.Exercises))
	for i, e := range cat.Exercises {
		out[i] = Exercise{Slug: e.Slug, Number: e.Number, Title: e.Title, Version: e.Version, Starter: e.Starter, Solution: e.Solution}
	}
	return out
}
