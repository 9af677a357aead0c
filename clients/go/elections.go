package redlockd

// The Election service's calls besides Campaign (docs/design.md#elections),
// and the views (docs/design.md#observe-and-watch): Observe follows an
// election, Watch a lock, each as an iterator over its stream. A view is not
// a lock: by the time a state arrives it may have changed; only the term or
// the fencing token, checked by the resource, makes a write safe.

import (
	"context"
	"io"
	"iter"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
)

// Leader is who leads an election, as a majority of the masters agree.
type Leader struct {
	// Elected is false when nobody leads (the other fields are then zero).
	Elected bool
	// Candidate and Value are the leader's name and published value.
	Candidate string
	Value     []byte
	// Term is exactly the term the leader was told in ELECTED.
	Term uint64
	// Since is when the term began, on the masters' clocks.
	Since time.Time
}

func leaderOf(reply *pb.LeaderResponse) Leader {
	if !reply.Elected {
		return Leader{}
	}
	return Leader{Elected: true, Candidate: reply.Candidate, Value: reply.Value, Term: reply.Term, Since: reply.Since.AsTime()}
}

func checkElection(election string) error {
	return printable("election", election, 1, maxElectionBytes)
}

// checkTerm is the daemon's rule for a term, in its words.
func checkTerm(term uint64) error {
	if term == 0 {
		return invalid("term", "must be set: the term ELECTED or Leader gave")
	}
	return nil
}

// Leader says who leads election now.
//
// # Errors
//
// ErrInvalidArgument for a bad election name, before anything is sent;
// ErrUnavailable when no majority of the masters answered.
func (c *Client) Leader(ctx context.Context, election string) (Leader, error) {
	if err := checkElection(election); err != nil {
		return Leader{}, err
	}
	reply, err := c.elections.Leader(c.Outgoing(ctx), &pb.LeaderRequest{Election: election})
	if err != nil {
		return Leader{}, fromStatus(err)
	}
	return leaderOf(reply), nil
}

// Proclaim sets the value (at most 4096 bytes) of the leader of term, from
// anywhere.
//
// # Errors
//
// ErrFailedPrecondition, whose message names the current term, when term
// does not lead (nothing changes); ErrInvalidArgument for a bad election, a
// zero term or a value too long, before anything is sent.
func (c *Client) Proclaim(ctx context.Context, election string, term uint64, value []byte) error {
	if err := checkElection(election); err != nil {
		return err
	}
	if err := checkTerm(term); err != nil {
		return err
	}
	if len(value) > maxElectionValueBytes {
		return invalid("value", "is %d bytes long; at most %d are allowed", len(value), maxElectionValueBytes)
	}
	_, err := c.elections.Proclaim(c.Outgoing(ctx), &pb.ProclaimRequest{Election: election, Term: term, Value: value})
	return fromStatusOrNil(err)
}

// Resign ends the leadership of term, from anywhere: the election's lock is
// released, and the leader's Context is cancelled.
//
// # Errors
//
// ErrFailedPrecondition, whose message names the current term, when term
// does not lead (nothing changes); ErrInvalidArgument for a bad election or
// a zero term, before anything is sent.
func (c *Client) Resign(ctx context.Context, election string, term uint64) error {
	if err := checkElection(election); err != nil {
		return err
	}
	if err := checkTerm(term); err != nil {
		return err
	}
	_, err := c.elections.Resign(c.Outgoing(ctx), &pb.ResignRequest{Election: election, Term: term})
	return fromStatusOrNil(err)
}

// Participants lists the candidates this daemon queues for election, first
// in line first (other daemons keep their own queues; a leader is no longer
// queued).
func (c *Client) Participants(ctx context.Context, election string) ([]string, error) {
	if err := checkElection(election); err != nil {
		return nil, err
	}
	reply, err := c.elections.Participants(c.Outgoing(ctx), &pb.ParticipantsRequest{Election: election})
	if err != nil {
		return nil, fromStatus(err)
	}
	return reply.Candidates, nil
}

// Observe follows election: its state now first, then every change (a new
// leader, a new value, nobody leading); terms never go back. Range over it;
// breaking out of the loop, or ctx ending, ends the stream:
//
//	for leader, err := range c.Observe(ctx, "jobs") {
//		if err != nil { return err }
//		route(leader.Value)
//	}
//
// An error is the last thing yielded: ErrInvalidArgument for a bad
// election name (nothing is sent), the daemon's errors, or ctx's.
func (c *Client) Observe(ctx context.Context, election string) iter.Seq2[Leader, error] {
	return func(yield func(Leader, error) bool) {
		if err := checkElection(election); err != nil {
			yield(Leader{}, err)
			return
		}
		ctx, cancel := context.WithCancel(c.Outgoing(ctx))
		defer cancel()
		stream, err := c.elections.Observe(ctx, &pb.ObserveRequest{Election: election})
		yieldEach(stream, err, leaderOf, yield)
	}
}

// Watch follows who holds resource: the state now first (CURRENT), then
// each change as the daemon sees it (ACQUIRED, RELEASED, EXPIRED,
// FORCE_RELEASED, CHANGED), as Observe does for an election.
func (c *Client) Watch(ctx context.Context, resource string) iter.Seq2[*pb.WatchResponse, error] {
	return func(yield func(*pb.WatchResponse, error) bool) {
		if err := printable("resource", resource, 1, maxResourceBytes); err != nil {
			yield(nil, err)
			return
		}
		ctx, cancel := context.WithCancel(c.Outgoing(ctx))
		defer cancel()
		stream, err := c.stub.Watch(ctx, &pb.WatchRequest{Resource: resource})
		yieldEach(stream, err, func(change *pb.WatchResponse) *pb.WatchResponse { return change }, yield)
	}
}

// yieldEach yields each message of a server stream (opened with err),
// converted, until the stream ends cleanly, fails (the error is yielded
// last) or the loop breaks.
func yieldEach[M any, T any](stream interface{ Recv() (M, error) }, err error, convert func(M) T, yield func(T, error) bool) {
	var zero T
	if err != nil {
		yield(zero, fromStatus(err))
		return
	}
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return
		}
		if err != nil {
			yield(zero, fromStatus(err))
			return
		}
		if !yield(convert(message), nil) {
			return
		}
	}
}

func fromStatusOrNil(err error) error {
	if err != nil {
		return fromStatus(err)
	}
	return nil
}
