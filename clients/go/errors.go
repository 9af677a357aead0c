package redlockd

// The daemon's gRPC status codes as typed errors, mapped in one place.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The errors a call can end with; test them with errors.Is. A call cut
// short by its context's deadline or cancellation matches
// context.DeadlineExceeded or context.Canceled.
var (
	// ErrNotAcquired: someone else held the lock for the whole wait.
	ErrNotAcquired = errors.New("redlockd: not acquired")
	// ErrLockLost: the lock was lost (or its validity ran out) while it was
	// held; the work under it is no longer protected.
	ErrLockLost = errors.New("redlockd: lock lost")
	// ErrInvalidArgument: a request field is out of range; the message
	// names the field and the allowed range.
	ErrInvalidArgument = errors.New("redlockd: invalid argument")
	// ErrUnavailable: fewer than a quorum of the masters could take part.
	ErrUnavailable = errors.New("redlockd: unavailable")
	// ErrUnauthenticated: no valid bearer token.
	ErrUnauthenticated = errors.New("redlockd: unauthenticated")
	// ErrPermissionDenied: the tenant may not lock this resource.
	ErrPermissionDenied = errors.New("redlockd: permission denied")
	// ErrResourceExhausted: a waiter or session limit was hit.
	ErrResourceExhausted = errors.New("redlockd: resource exhausted")
	// ErrFailedPrecondition: the lock is held as another kind than asked:
	// permits of another number are out (Permits), or the ReentrancyKey
	// holds the lock in another mode or number of permits.
	ErrFailedPrecondition = errors.New("redlockd: failed precondition")
)

// Error is a failed call: its kind (one of the Err values above, for
// errors.Is) and the daemon's message.
type Error struct {
	Kind    error
	Message string
	// Nodes is what each master said ("granted", "held by another owner",
	// "timed out", ...), by index, with ErrUnavailable or ErrNotAcquired.
	Nodes map[int]string
	// Needed is how many masters make a quorum, with ErrUnavailable.
	Needed int

	status *status.Status
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }

// Unwrap lets errors.Is(err, redlockd.ErrUnavailable) see the kind.
func (e *Error) Unwrap() error { return e.Kind }

// GRPCStatus keeps status.Code(err) working on an error from the daemon
// (UNKNOWN for ErrNotAcquired and ErrLockLost, which are not statuses).
func (e *Error) GRPCStatus() *status.Status {
	if e.status == nil {
		return status.New(codes.Unknown, e.Error())
	}
	return e.status
}

var byCode = map[codes.Code]error{
	codes.InvalidArgument:    ErrInvalidArgument,
	codes.Unavailable:        ErrUnavailable,
	codes.Unauthenticated:    ErrUnauthenticated,
	codes.PermissionDenied:   ErrPermissionDenied,
	codes.ResourceExhausted:  ErrResourceExhausted,
	codes.FailedPrecondition: ErrFailedPrecondition,
	codes.DeadlineExceeded:   context.DeadlineExceeded,
	codes.Canceled:           context.Canceled,
}

// fromStatus is the typed error of a failed call; codes without a kind
// (INTERNAL, ...) stay gRPC status errors.
func fromStatus(err error) error {
	s, ok := status.FromError(err)
	if !ok {
		return err
	}
	kind, known := byCode[s.Code()]
	if !known {
		return err
	}
	e := &Error{Kind: kind, Message: s.Message(), status: s}
	for _, detail := range s.Details() {
		info, ok := detail.(*errdetails.ErrorInfo)
		if !ok || info.Reason != "NO_QUORUM" {
			continue
		}
		e.Nodes = map[int]string{}
		for key, value := range info.Metadata {
			if strings.HasPrefix(key, "node.") {
				if i, err := strconv.Atoi(key[len("node."):]); err == nil {
					e.Nodes[i] = value
				}
			} else if key == "needed" {
				e.Needed, _ = strconv.Atoi(value)
			}
		}
	}
	return e
}

// invalid is an ErrInvalidArgument found before sending, worded as the
// daemon words it: "invalid <field>: <what is wrong and what is allowed>".
func invalid(field, format string, args ...interface{}) error {
	message := fmt.Sprintf("invalid %s: %s", field, fmt.Sprintf(format, args...))
	return &Error{Kind: ErrInvalidArgument, Message: message, status: status.New(codes.InvalidArgument, message)}
}

func isUnavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrUnavailable
}

// outcomeNames are the NodeOutcome values in the daemon's words, as in an
// UNAVAILABLE's ErrorInfo.
var outcomeNames = map[pb.NodeOutcome]string{
	pb.NodeOutcome_NODE_OUTCOME_GRANTED:     "granted",
	pb.NodeOutcome_NODE_OUTCOME_TAKEN:       "held by another owner",
	pb.NodeOutcome_NODE_OUTCOME_TIMED_OUT:   "timed out",
	pb.NodeOutcome_NODE_OUTCOME_ERRORED:     "errored",
	pb.NodeOutcome_NODE_OUTCOME_QUARANTINED: "quarantined",
	pb.NodeOutcome_NODE_OUTCOME_UNUSABLE:    "unusable",
	pb.NodeOutcome_NODE_OUTCOME_NOT_AWAITED: "not awaited",
}

// notAcquired is ErrNotAcquired with what each master said last.
func notAcquired(reason string, outcomes []pb.NodeOutcome) error {
	nodes := make(map[int]string, len(outcomes))
	for i, outcome := range outcomes {
		nodes[i] = outcomeNames[outcome]
	}
	return &Error{Kind: ErrNotAcquired, Message: reason, Nodes: nodes}
}
