package redlockd

// Campaign: leader election (docs/design.md#elections). A campaign is a
// Hold session with a value: the daemon queues the candidate, says ELECTED
// with the term (the election lock's fencing token), extends the term while
// the stream lives, and resigns for a client that goes away.
//
// The leader's rule: count each ELECTED / EXTENDED valid_for from when the
// message arrived (Go's monotonic clock); stop leading at LOST or when it
// runs out, whichever comes first — Context is cancelled at both — and
// send the term with every write.

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	maxElectionBytes      = 256
	maxCandidateBytes     = 256
	maxElectionValueBytes = 4096
	// resignConfirmation bounds how long Resign, a Proclaim and a wait that
	// ran out wait for the daemon's answer.
	resignConfirmation = 10 * time.Second
)

// Campaign campaigns for election as candidate and returns once elected,
// publishing value (at most 4096 bytes) as the leader's. The candidate
// waits in line behind the others for up to Wait (unset or 0: until
// elected, or ctx ends); the daemon then extends the term at about a third
// of TTL (default 10 s) while the leadership lives. Resign ends it; so does
// cancelling ctx (ctx bounds the whole leadership, not only the wait),
// closing the client, or the process dying. The leadership's Context is
// cancelled the moment it is lost — at LOST, or, with no extension, 100 ms
// (at most a quarter of the validity) before its valid_for runs out (the
// client's own deadline, should the daemon fall silent). Options: TTL,
// Wait, MaxHold, LockDelay.
//
// # Errors
//
// ErrNotAcquired (errors.Is) when Wait ran out before the candidate was
// elected (it withdrew; nothing is held); ErrInvalidArgument for a bad
// election, candidate, value or option (Owner, Shared, Permits and
// ReentrancyKey do not apply), before anything is sent when the client can
// tell; ErrUnavailable as Hold's, retried until the wait runs out.
func (c *Client) Campaign(ctx context.Context, election, candidate string, value []byte, opts ...LockOption) (*Leadership, error) {
	s, err := campaignSettingsOf(election, candidate, value, opts)
	if err != nil {
		return nil, err
	}
	start := &pb.CampaignStart{Election: election, Candidate: candidate, Value: value, Ttl: durationpb.New(s.ttl)}
	if s.maxHoldSet {
		start.MaxHold = durationpb.New(s.maxHold)
	}
	if s.lockDelay > 0 {
		start.LockDelay = durationpb.New(s.lockDelay)
	}
	wait, limited := time.Duration(math.MaxInt64), s.wait > 0
	if limited {
		wait = s.wait
	}
	retry := newRetry(wait)
	for {
		l, err := c.elect(ctx, start, retry.left(), limited)
		if err != nil {
			if err = retry.after(ctx, err); err == nil {
				continue
			}
			return nil, err
		}
		return l, nil
	}
}

// campaignSettingsOf checks Campaign's arguments with the daemon's rules
// and words (src/api/request.rs).
func campaignSettingsOf(election, candidate string, value []byte, opts []LockOption) (lockSettings, error) {
	s := apply(0, opts)
	if err := printable("election", election, 1, maxElectionBytes); err != nil {
		return s, err
	}
	if err := printable("candidate", candidate, 1, maxCandidateBytes); err != nil {
		return s, err
	}
	if len(value) > maxElectionValueBytes {
		return s, invalid("value", "is %d bytes long; at most %d are allowed", len(value), maxElectionValueBytes)
	}
	const only = "a campaign takes TTL, Wait, MaxHold and LockDelay"
	switch {
	case s.owner != "":
		return s, invalid("owner", "%s (the candidate names it)", only)
	case s.shared:
		return s, invalid("mode", only)
	case s.permits != 0:
		return s, invalid("permits", only)
	case s.key != "":
		return s, invalid("reentrancy_key", only)
	}
	return s, s.check()
}

// delivered is one message of a campaign's stream, stamped with when it
// arrived, or (msg nil) how the stream ended.
type delivered struct {
	msg *pb.CampaignResponse
	at  time.Time
	err error
}

// elect makes one attempt: a stream, its start, and the wait for ELECTED
// (for up to wait when limited).
func (c *Client) elect(ctx context.Context, start *pb.CampaignStart, wait time.Duration, limited bool) (*Leadership, error) {
	streamCtx, cancel := context.WithCancel(c.Outgoing(ctx))
	stream, err := c.elections.Campaign(streamCtx)
	if err == nil {
		err = stream.Send(&pb.CampaignRequest{Request: &pb.CampaignRequest_Start{Start: start}})
	}
	if err != nil && stream == nil {
		cancel()
		return nil, fromStatus(err)
	}
	// On an error from Send, the stream's end says why.
	messages := make(chan delivered)
	go read(streamCtx, stream, messages)
	var timeout <-chan time.Time
	if limited {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		timeout = timer.C
	}
	var first delivered
	var open bool
	select {
	case first, open = <-messages:
		if !open { // ctx ended
			cancel()
			return nil, ctx.Err()
		}
	case <-timeout:
		withdraw(stream, messages)
		cancel()
		return nil, &Error{Kind: ErrNotAcquired, Message: fmt.Sprintf("not elected within %v", wait)}
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	switch {
	case first.err != nil:
		cancel()
		return nil, fromStatus(first.err)
	case first.msg.Event != pb.CampaignEvent_CAMPAIGN_EVENT_ELECTED:
		cancel()
		return nil, &Error{Kind: ErrLockLost, Message: fmt.Sprintf("the campaign ended before this candidate led: %v %s", first.msg.Event, first.msg.Reason)}
	}
	l := &Leadership{client: c, election: start.Election, candidate: start.Candidate, term: first.msg.Term,
		value: first.msg.Value, stream: stream, cancelStream: cancel, done: make(chan struct{})}
	l.begin(first.at, first.msg.ValidFor.AsDuration(), "valid_for ran out before an extension came: the client's own deadline")
	go l.follow(messages)
	return l, nil
}

// read delivers the stream's messages until it ends (then its error, io.EOF
// for a clean end) or ctx is cancelled; then it closes messages.
func read(ctx context.Context, stream pb.Election_CampaignClient, messages chan<- delivered) {
	defer close(messages)
	for {
		msg, err := stream.Recv()
		select {
		case messages <- delivered{msg: msg, at: time.Now(), err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// withdraw gives up a candidacy whose wait ran out: it resigns and reads on
// until the daemon confirms (an ELECTED that crossed the resignation is
// followed by RESIGNED), for up to resignConfirmation.
func withdraw(stream pb.Election_CampaignClient, messages <-chan delivered) {
	_ = stream.Send(&pb.CampaignRequest{Request: &pb.CampaignRequest_Resign{Resign: &pb.CampaignResign{}}})
	_ = stream.CloseSend()
	timer := time.NewTimer(resignConfirmation)
	defer timer.Stop()
	for {
		select {
		case got, open := <-messages:
			if !open || got.err != nil || got.msg.Event == pb.CampaignEvent_CAMPAIGN_EVENT_NOT_ELECTED ||
				got.msg.Event == pb.CampaignEvent_CAMPAIGN_EVENT_RESIGNED || got.msg.Event == pb.CampaignEvent_CAMPAIGN_EVENT_LOST {
				return
			}
		case <-timer.C:
			return
		}
	}
}

// Leadership is a won campaign: its term, its published value, until when
// it is guaranteed, and a context that ends when it no longer is.
type Leadership struct {
	client              *Client
	election, candidate string
	term                uint64

	lifetime                  // mu also guards what follows
	value     []byte          // published now
	resigning bool            // Resign was called
	resigned  bool            // RESIGNED came
	proclaims []chan struct{} // closed at PROCLAIMED (in order) or a loss

	stream       pb.Election_CampaignClient
	sending      sync.Mutex // one Send at a time
	closing      sync.Once
	cancelStream context.CancelFunc
	done         chan struct{} // closed when the stream has ended
}
