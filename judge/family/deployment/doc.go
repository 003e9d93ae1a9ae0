// Package deployment is the family of a Deployment controller that makes
// and replaces Pods (exercise 171): the Pods it owns, on its template's
// image, rolled out within maxSurge and maxUnavailable.
package deployment
