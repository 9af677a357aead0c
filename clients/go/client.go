// Package redlockd is the Go client of redlockd: distributed locks with
// fencing tokens over gRPC, from a daemon that runs Redlock against
// independent Redis masters.
//
//	c, err := redlockd.Dial(ctx, "")                  // REDLOCKD_ADDR, default 127.0.0.1:7420
//	l, err := c.Hold(ctx, "jobs/nightly", redlockd.TTL(10*time.Second), redlockd.Wait(5*time.Second))
//	if errors.Is(err, redlockd.ErrNotAcquired) { ... }
//	defer l.Release(ctx)
//	store.Write(l.Context(), data, l.FencingToken())  // l.Context() is cancelled when the lock is lost
//
// Every lease's ValidUntil counts from the moment its request was sent.
package redlockd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/rand"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
)

// DefaultAddr is the sidecar on loopback.
const DefaultAddr = "127.0.0.1:7420"

const (
	maxResourceBytes = 256
	maxOwnerBytes    = 256
)

// Client is a connection to one redlockd; safe for concurrent use.
type Client struct {
	conn  *grpc.ClientConn
	stub  pb.LockClient
	token string
}

// DialOption configures Dial.
type DialOption func(*dialSettings) error

type dialSettings struct {
	token string
	tls   *tls.Config
}

// WithToken sends `authorization: Bearer <token>` with every call.
func WithToken(token string) DialOption {
	return func(s *dialSettings) error { s.token = token; return nil }
}

// WithTLS speaks TLS, trusting caPEM (nil: the system's roots) and, for
// mutual TLS, presenting certPEM with keyPEM.
func WithTLS(caPEM, certPEM, keyPEM []byte) DialOption {
	return func(s *dialSettings) error {
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if caPEM != nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(caPEM) {
				return invalid("tls", "the CA holds no PEM certificate")
			}
			config.RootCAs = pool
		}
		if certPEM != nil || keyPEM != nil {
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return invalid("tls", "%v", err)
			}
			config.Certificates = []tls.Certificate{pair}
		}
		s.tls = config
		return nil
	}
}

// Dial connects to the daemon at addr ("" = REDLOCKD_ADDR, default
// 127.0.0.1:7420). Without options it reads REDLOCKD_TOKEN and
// REDLOCKD_CA, REDLOCKD_CERT with REDLOCKD_KEY (PEM files), as redlockctl.
func Dial(ctx context.Context, addr string, opts ...DialOption) (*Client, error) {
	if addr == "" {
		addr = os.Getenv("REDLOCKD_ADDR")
	}
	if addr == "" {
		addr = DefaultAddr
	}
	settings := dialSettings{token: os.Getenv("REDLOCKD_TOKEN")}
	ca, cert, key := os.Getenv("REDLOCKD_CA"), os.Getenv("REDLOCKD_CERT"), os.Getenv("REDLOCKD_KEY")
	if ca != "" || cert != "" || key != "" {
		if (cert == "") != (key == "") {
			return nil, invalid("REDLOCKD_CERT", "REDLOCKD_CERT and REDLOCKD_KEY must be set together")
		}
		read := func(path string) ([]byte, error) {
			if path == "" {
				return nil, nil
			}
			return os.ReadFile(path)
		}
		caPEM, err1 := read(ca)
		certPEM, err2 := read(cert)
		keyPEM, err3 := read(key)
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				return nil, invalid("tls", "%v", err)
			}
		}
		if err := WithTLS(caPEM, certPEM, keyPEM)(&settings); err != nil {
			return nil, err
		}
	}
	for _, opt := range opts {
		if err := opt(&settings); err != nil {
			return nil, err
		}
	}
	if strings.HasPrefix(addr, "https://") && settings.tls == nil {
		settings.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "https://"), "http://")
	transport := grpc.WithInsecure()
	if settings.tls != nil {
		transport = grpc.WithTransportCredentials(credentials.NewTLS(settings.tls))
	}
	conn, err := grpc.DialContext(ctx, addr, transport)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, stub: pb.NewLockClient(conn), token: settings.token}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Stub is the generated client on this connection, for calls this package
// does not wrap (pass the context through Client.Outgoing for the token).
func (c *Client) Stub() pb.LockClient { return c.stub }

// Outgoing adds the bearer token to ctx.
func (c *Client) Outgoing(ctx context.Context) context.Context {
	if c.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
}

// LockOption configures Acquire, Hold and Do.
type LockOption func(*lockSettings)

type lockSettings struct {
	ttl     time.Duration
	wait    time.Duration
	owner   string
	maxHold time.Duration
}

// TTL is how long the lock lives unless extended (within the daemon's
// [min_ttl, max_ttl]; default 10 s).
func TTL(d time.Duration) LockOption { return func(s *lockSettings) { s.ttl = d } }

// Wait is how long to keep trying while someone else holds the lock
// (Acquire: default 0, one attempt; Hold and Do: default 5 s).
func Wait(d time.Duration) LockOption { return func(s *lockSettings) { s.wait = d } }

// Owner is a label for logs and Inspect.
func Owner(owner string) LockOption { return func(s *lockSettings) { s.owner = owner } }

// MaxHold is the longest the daemon keeps a Hold session's lock.
func MaxHold(d time.Duration) LockOption { return func(s *lockSettings) { s.maxHold = d } }

func settingsOf(resource string, wait time.Duration, opts []LockOption) (lockSettings, error) {
	s := lockSettings{ttl: 10 * time.Second, wait: wait}
	for _, opt := range opts {
		opt(&s)
	}
	if err := printable("resource", resource, 1, maxResourceBytes); err != nil {
		return s, err
	}
	if err := printable("owner", s.owner, 0, maxOwnerBytes); err != nil {
		return s, err
	}
	if s.ttl <= 0 || s.wait < 0 || s.maxHold < 0 {
		return s, invalid("ttl", "durations must be positive (ttl %v, wait %v, max_hold %v)", s.ttl, s.wait, s.maxHold)
	}
	return s, nil
}

// printable is the daemon's rule for text fields, with its message.
func printable(field, value string, least, most int) error {
	if len(value) < least || len(value) > most {
		return invalid(field, "is %d bytes long; it must be %d to %d bytes of printable UTF-8", len(value), least, most)
	}
	if !utf8.ValidString(value) {
		return invalid(field, "is not valid UTF-8")
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return invalid(field, "contains the control character %q; only printable UTF-8 is allowed", r)
		}
	}
	return nil
}

// retryAfter pauses after err and returns nil when the call is to be tried
// again: err is UNAVAILABLE and a jittered pause still fits before
// deadline. Otherwise it returns err (or ctx's error).
func retryAfter(ctx context.Context, err error, deadline time.Time) error {
	pause := 50*time.Millisecond + time.Duration(rand.Int63n(int64(200*time.Millisecond)))
	if !isUnavailable(err) || !time.Now().Add(pause).Before(deadline) {
		return err
	}
	select {
	case <-time.After(pause):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Acquire takes the lock on resource, trying for up to Wait. It returns
// ErrNotAcquired (errors.Is) when someone else kept it all along. A wait
// the daemon cuts short with UNAVAILABLE is retried with jitter.
func (c *Client) Acquire(ctx context.Context, resource string, opts ...LockOption) (*Lease, error) {
	s, err := settingsOf(resource, 0, opts)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(s.wait)
	for {
		sent := time.Now()
		request := &pb.AcquireRequest{Resource: resource, Owner: s.owner, Ttl: durationpb.New(s.ttl)}
		if left := deadline.Sub(sent); left > 0 {
			request.Wait = durationpb.New(left)
		}
		reply, err := c.stub.Acquire(c.Outgoing(ctx), request)
		if err != nil {
			if err = retryAfter(ctx, fromStatus(err), deadline); err == nil {
				continue
			}
			return nil, err
		}
		if !reply.Acquired {
			return nil, &Error{Kind: ErrNotAcquired, Message: reply.Reason.String()}
		}
		return newLease(c, reply.Lease, sent.Add(reply.Lease.Validity.AsDuration())), nil
	}
}

// Do runs fn while a Hold session holds the lock, and releases it after.
// fn's context is cancelled the moment the lock is lost; Do then returns
// an error wrapping ErrLockLost, even if fn succeeded.
func (c *Client) Do(ctx context.Context, resource string, fn func(context.Context, *Lease) error, opts ...LockOption) error {
	l, err := c.Hold(ctx, resource, opts...)
	if err != nil {
		return err
	}
	ran := fn(l.Context(), l)
	_, released := l.Release(context.Background())
	if ran != nil {
		return ran
	}
	return released
}

func isUnavailable(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == ErrUnavailable
}
