package ctrl

import "time"

// DeepCopy and its helpers are generated (kinds_copy_gen.go); these are
// what they share.

// wireTime is t as the codec carries it: nanoseconds since the epoch, in
// UTC, zero as zero (and so the epoch itself).
func wireTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	n := t.UnixNano()
	if n == 0 { // the epoch is sent as 0, and 0 means zero
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// cloneSlice copies s, of elements without references; empty comes back
// as nil, as from the codec.
func cloneSlice[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	c := make([]T, len(s))
	copy(c, s)
	return c
}
