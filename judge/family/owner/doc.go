// Package owner is the family of a controller that makes one child object
// for each of its custom resources, under a name it derives, owns it, and
// refuses to touch an object of that name that it does not own
// (exercise 175: an App and its Deployment).
package owner
