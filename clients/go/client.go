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
// Leader election is the same idiom: c.Campaign(ctx, "jobs", "pod-7", addr)
// returns a *Leadership whose Context() is cancelled at LOST or at the
// client's own deadline; c.Leader, c.Observe and c.Watch follow who leads
// an election and who holds a lock.
//
// Every lease's ValidUntil counts from the moment its request was sent
// (the client rule of proto/redlockd/v1/lock.proto).
package redlockd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// DefaultAddr is the sidecar on loopback.
const DefaultAddr = "127.0.0.1:7420"

// Client is a connection to one redlockd; safe for concurrent use.
type Client struct {
	conn      *grpc.ClientConn
	stub      pb.LockClient
	elections pb.ElectionClient
	token     string
}

// DialOption configures Dial.
type DialOption func(*dialSettings) error

type dialSettings struct {
	token string
	tls   *tls.Config
}

// WithToken sends `authorization: Bearer <token>` with every call
// (instead of REDLOCKD_TOKEN).
func WithToken(token string) DialOption {
	return func(s *dialSettings) error { s.token = token; return nil }
}

// WithTLS speaks TLS (instead of the files REDLOCKD_CA, REDLOCKD_CERT and
// REDLOCKD_KEY name), trusting caPEM (nil: the system's roots) and, for
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

// fromEnvironment reads REDLOCKD_TOKEN and the TLS files as redlockctl
// does; options given to Dial override them.
func fromEnvironment() (dialSettings, error) {
	settings := dialSettings{token: os.Getenv("REDLOCKD_TOKEN")}
	ca, cert, key := os.Getenv("REDLOCKD_CA"), os.Getenv("REDLOCKD_CERT"), os.Getenv("REDLOCKD_KEY")
	if ca == "" && cert == "" && key == "" {
		return settings, nil
	}
	if (cert == "") != (key == "") {
		return settings, invalid("REDLOCKD_CERT", "REDLOCKD_CERT and REDLOCKD_KEY must be set together")
	}
	pems := map[string][]byte{}
	for variable, path := range map[string]string{"REDLOCKD_CA": ca, "REDLOCKD_CERT": cert, "REDLOCKD_KEY": key} {
		if path == "" {
			continue
		}
		pem, err := os.ReadFile(path)
		if err != nil {
			return settings, invalid(variable, "%v", err)
		}
		pems[variable] = pem
	}
	err := WithTLS(pems["REDLOCKD_CA"], pems["REDLOCKD_CERT"], pems["REDLOCKD_KEY"])(&settings)
	return settings, err
}

// Dial connects to the daemon at addr ("" = REDLOCKD_ADDR, default
// 127.0.0.1:7420; "https://host:port" turns TLS on). Unless WithToken and
// WithTLS say otherwise, it reads REDLOCKD_TOKEN and REDLOCKD_CA,
// REDLOCKD_CERT with REDLOCKD_KEY (PEM files), as redlockctl does. The
// connection is made lazily, by the first call: Dial does not wait for the
// daemon, and ctx only keeps the signature of a dial.
//
// # Errors
//
// ErrInvalidArgument when a TLS file cannot be read or holds no PEM, or
// addr is no gRPC target.
func Dial(ctx context.Context, addr string, opts ...DialOption) (*Client, error) {
	if addr == "" {
		addr = os.Getenv("REDLOCKD_ADDR")
	}
	if addr == "" {
		addr = DefaultAddr
	}
	settings, err := fromEnvironment()
	if err != nil {
		return nil, err
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
	transport := insecure.NewCredentials()
	if settings.tls != nil {
		transport = credentials.NewTLS(settings.tls)
	}
	conn, err := grpc.NewClient(addr, append(traceContext(), grpc.WithTransportCredentials(transport))...)
	if err != nil {
		return nil, invalid("addr", "%q is not a gRPC target (host:port, or https://host:port): %v", addr, err)
	}
	return &Client{conn: conn, stub: pb.NewLockClient(conn), elections: pb.NewElectionClient(conn), token: settings.token}, nil
}

// Close closes the connection; the daemon releases the locks of the Hold
// sessions still open on it.
func (c *Client) Close() error { return c.conn.Close() }

// Stub is the generated client on this connection, for calls this package
// does not wrap (pass contexts through Client.Outgoing for the token).
func (c *Client) Stub() pb.LockClient { return c.stub }

// ElectionStub is the generated Election client on this connection.
func (c *Client) ElectionStub() pb.ElectionClient { return c.elections }

// Outgoing adds the bearer token to ctx.
func (c *Client) Outgoing(ctx context.Context) context.Context {
	if c.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
}

// Inspect shows what each master holds for resource (never lock values).
//
// # Errors
//
// ErrInvalidArgument for a bad resource name, before anything is sent;
// the daemon's errors as *Error.
func (c *Client) Inspect(ctx context.Context, resource string) (*pb.InspectResponse, error) {
	if err := printable("resource", resource, 1, maxResourceBytes); err != nil {
		return nil, err
	}
	reply, err := c.stub.Inspect(c.Outgoing(ctx), &pb.InspectRequest{Resource: resource})
	if err != nil {
		return nil, fromStatus(err)
	}
	return reply, nil
}
