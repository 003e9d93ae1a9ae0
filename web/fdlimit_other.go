//go:build !unix

package web

// openFileLimit is unknown here: Serve caps no connections.
func openFileLimit() int { return 0 }
