// Package registry is the family of a controller that keeps a shared
// record outside the garbage collector's reach, guarded by finalizers
// (exercise 173).
package registry
