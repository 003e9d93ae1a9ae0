// Package confighash is the family of a controller that stamps the hash
// of a ConfigMap's data on a Deployment's Pod template, so that a config
// change rolls the Pods (exercise 174).
package confighash
