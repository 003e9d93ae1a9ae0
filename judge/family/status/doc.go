// Package status is the family of a controller that only reports
// (exercise 172): a Deployment's status counts its Pods as they are.
package status
