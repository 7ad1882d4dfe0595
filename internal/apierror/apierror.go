// Package apierror is the one error type that areas return to say why a request failed.
//
// An area never picks an HTTP status: it picks a Kind, and internal/api maps every Kind to its
// status in one place. Any error that is not an *Error becomes a 500 whose body hides the details.
package apierror

import (
	"errors"
	"fmt"
)

// Kind classifies a failure the caller can act on.
type Kind int

const (
	// Invalid: the request broke a rule (400). The message names the field and the rule.
	Invalid Kind = iota + 1
	// Unauthenticated: no key, or a key that is unknown, inactive or deleted (401).
	Unauthenticated
	// Forbidden: the key lacks the operation's permission (403).
	Forbidden
	// NotFound: no such resource in the caller's team (404).
	NotFound
	// Conflict: the request clashes with the current state (409).
	Conflict
	// LimitExceeded: the request would pass a limit of the team (429).
	LimitExceeded
)

// Error is a failure with a message meant for the caller.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

func newf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Invalidf reports a broken rule; start the message with the field path, e.g. "groups[0].name: ...".
func Invalidf(format string, args ...any) *Error { return newf(Invalid, format, args...) }

// Unauthenticatedf reports a missing or unusable key.
func Unauthenticatedf(format string, args ...any) *Error {
	return newf(Unauthenticated, format, args...)
}

// Forbiddenf reports a missing permission.
func Forbiddenf(format string, args ...any) *Error { return newf(Forbidden, format, args...) }

// NotFoundf reports a resource that does not exist for the caller.
func NotFoundf(format string, args ...any) *Error { return newf(NotFound, format, args...) }

// Conflictf reports a clash with existing state.
func Conflictf(format string, args ...any) *Error { return newf(Conflict, format, args...) }

// LimitExceededf reports a limit that the request would pass.
func LimitExceededf(format string, args ...any) *Error {
	return newf(LimitExceeded, format, args...)
}

// As returns the *Error inside err, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
