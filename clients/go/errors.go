package redlockd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The errors a call can end with; test them with errors.Is.
var (
	// ErrNotAcquired: someone else held the lock for the whole wait.
	ErrNotAcquired = errors.New("redlockd: not acquired")
	// ErrLockLost: the lock was lost while it was held.
	ErrLockLost = errors.New("redlockd: lock lost")
	// ErrInvalidArgument: a request field is out of range.
	ErrInvalidArgument = errors.New("redlockd: invalid argument")
	// ErrUnavailable: fewer than a quorum of the masters could take part.
	ErrUnavailable = errors.New("redlockd: unavailable")
	// ErrUnauthenticated: no valid bearer token.
	ErrUnauthenticated = errors.New("redlockd: unauthenticated")
	// ErrPermissionDenied: the tenant may not lock this resource.
	ErrPermissionDenied = errors.New("redlockd: permission denied")
	// ErrResourceExhausted: a waiter or session limit was hit.
	ErrResourceExhausted = errors.New("redlockd: resource exhausted")
)

// Error is a failed call: the kind (one of the Err values above, for
// errors.Is) and the daemon's message.
type Error struct {
	Kind    error
	Message string
	// Nodes is what each master said ("granted", "timed out", ...), by
	// index, with ErrUnavailable.
	Nodes map[int]string
	// Needed is the quorum, with ErrUnavailable.
	Needed int
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }

// Unwrap lets errors.Is(err, redlockd.ErrUnavailable) see the kind.
func (e *Error) Unwrap() error { return e.Kind }

var byCode = map[codes.Code]error{
	codes.InvalidArgument:   ErrInvalidArgument,
	codes.Unavailable:       ErrUnavailable,
	codes.Unauthenticated:   ErrUnauthenticated,
	codes.PermissionDenied:  ErrPermissionDenied,
	codes.ResourceExhausted: ErrResourceExhausted,
}

// fromStatus is the typed error of a failed call.
func fromStatus(err error) error {
	s, ok := status.FromError(err)
	if !ok {
		return err
	}
	kind, known := byCode[s.Code()]
	if !known {
		return err
	}
	e := &Error{Kind: kind, Message: s.Message()}
	if kind == ErrUnavailable {
		e.Nodes = map[int]string{}
		for _, detail := range s.Details() {
			info, ok := detail.(*errdetails.ErrorInfo)
			if !ok {
				continue
			}
			for key, value := range info.Metadata {
				if strings.HasPrefix(key, "node.") {
					if i, err := strconv.Atoi(key[5:]); err == nil {
						e.Nodes[i] = value
					}
				} else if key == "needed" {
					e.Needed, _ = strconv.Atoi(value)
				}
			}
		}
	}
	return e
}

func invalid(field, format string, args ...interface{}) error {
	return &Error{Kind: ErrInvalidArgument, Message: fmt.Sprintf("invalid %s: %s", field, fmt.Sprintf(format, args...))}
}
