// Package family is what an exercise family knows that is easier said in
// Go than in data: the desired state and safety rules of its model (the
// Family interface), its words and hints, and the generator of its
// scenarios' worlds. Each family lives in a folder of its own below this
// one; the judge package lists them in one table (models.go). This
// package holds the interface and the kit the families share: drawing
// Deployments and Pods (Gen, PodWorld, PodStep) and describing them.
package family
