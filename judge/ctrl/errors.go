package ctrl

import "errors"

// Reasons carried by a StatusError.
const (
	ReasonNotFound      = "NotFound"
	ReasonAlreadyExists = "AlreadyExists"
	ReasonConflict      = "Conflict"
	ReasonInvalid       = "Invalid"
	ReasonInternal      = "InternalError"
	// ReasonServiceUnavailable is an API server too busy to answer for a
	// moment; trying again later works.
	ReasonServiceUnavailable = "ServiceUnavailable"
	// ReasonForbidden is a write refused by policy, such as a quota on the
	// number or size of objects (HTTP 403, "exceeded quota").
	ReasonForbidden = "Forbidden"
	// ReasonRequestEntityTooLarge is a request or object over the size the
	// server stores (HTTP 413).
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
)

// StatusError is an error returned by the API server.
type StatusError struct {
	Code    int32  // HTTP status: 403, 404, 409, 413, 422, 500
	Reason  string // one of the Reason constants
	Message string
}

func (e *StatusError) Error() string { return e.Message }

func reasonOf(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Reason
	}
	return ""
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool { return reasonOf(err) == ReasonNotFound }

// IsAlreadyExists reports whether err says an object of that name exists.
func IsAlreadyExists(err error) bool { return reasonOf(err) == ReasonAlreadyExists }

// IsConflict reports whether err says the object changed since it was read:
// read it again and retry, or return the error to be requeued.
func IsConflict(err error) bool { return reasonOf(err) == ReasonConflict }

// IsInvalid reports whether err says the object was rejected as malformed.
func IsInvalid(err error) bool { return reasonOf(err) == ReasonInvalid }

// IsForbidden reports whether err says the write was refused by policy,
// such as an exceeded quota: retrying the same write will not help.
func IsForbidden(err error) bool { return reasonOf(err) == ReasonForbidden }

// IsServiceUnavailable reports whether err says the API server was too
// busy to answer: nothing was read or written, and a retry may work.
func IsServiceUnavailable(err error) bool { return reasonOf(err) == ReasonServiceUnavailable }

// IsInternalError reports whether err says the API server failed to
// answer: nothing was read or written, and a retry may work.
func IsInternalError(err error) bool { return reasonOf(err) == ReasonInternal }

// IsRequestEntityTooLarge reports whether err says the object or request
// was larger than the server accepts.
func IsRequestEntityTooLarge(err error) bool { return reasonOf(err) == ReasonRequestEntityTooLarge }
