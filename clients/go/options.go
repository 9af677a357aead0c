package redlockd

// The options of Acquire, Hold, Do, AcquireMany and Campaign, checked before anything is sent
// with the daemon's own rules and words (src/api/request.rs). Ranges only
// the daemon knows (ttl within its [min_ttl, max_ttl], wait up to
// max_wait, max_hold up to its lock.max_hold) are checked by the daemon.

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	maxResourceBytes      = 256
	maxOwnerBytes         = 256
	maxReentrancyKeyBytes = 128
)

// MaxSet is the most resources one AcquireMany (or ExtendMany, ReleaseMany) takes.
const MaxSet = 16

// LockOption configures Acquire, Hold, Do and AcquireMany (which takes
// TTL, Wait and Owner: a set's locks are exclusive), and Campaign (which
// takes TTL, Wait, MaxHold and LockDelay).
type LockOption func(*lockSettings)

type lockSettings struct {
	ttl        time.Duration
	wait       time.Duration
	owner      string
	maxHold    time.Duration
	maxHoldSet bool
	shared     bool
	permits    int
	key        string
	lockDelay  time.Duration
	waitSet    bool
}

// TTL is how long the lock lives on the masters unless extended; within
// the daemon's [min_ttl, max_ttl] (by default 250ms to 60s). Default 10 s.
// A Hold session's TTL is what each extension renews; it must be at least
// 8 x the daemon's node_timeout (400 ms by default).
func TTL(d time.Duration) LockOption { return func(s *lockSettings) { s.ttl = d } }

// Wait is how long to keep trying while someone else holds the lock, at
// most the daemon's max_wait (60 s by default). Acquire: default 0, a
// single attempt; Hold and Do: default 5 s.
// Campaign: how long to wait to be elected; without it, until elected (or
// ctx ends).
func Wait(d time.Duration) LockOption { return func(s *lockSettings) { s.wait, s.waitSet = d, true } }

// Owner is a label for the daemon's logs and Inspect (at most 256 bytes of
// printable UTF-8); never part of the lock's identity.
func Owner(owner string) LockOption { return func(s *lockSettings) { s.owner = owner } }

// MaxHold is the longest the daemon keeps a Hold session's lock, counted
// from when it was acquired; default (and at most) the daemon's
// lock.max_hold, 1 h by default. Acquire ignores it.
func MaxHold(d time.Duration) LockOption {
	return func(s *lockSettings) { s.maxHold, s.maxHoldSet = d, true }
}

// LockDelay keeps a Hold session's lock (or a campaign's election) this
// much longer when the session ends without a release — the process died,
// the stream broke, the lock was lost — so that the next holder starts only
// after it: for resources that cannot check fencing tokens. Acquire: the
// masters keep a lease that is never released this much past its validity,
// through every Extend. Release (or Resign) frees it at once. At most the
// daemon's lock.max_lock_delay (60 s by default); default 0. A set
// (AcquireMany) takes none.
func LockDelay(d time.Duration) LockOption { return func(s *lockSettings) { s.lockDelay = d } }

// Shared takes a shared lock (a reader of a read-write lock) instead of an
// exclusive one: readers hold the lock together, while an exclusive holder
// (a writer, the default) excludes every reader and every other writer. A
// writer refused by readers keeps new readers out while it waits. Readers
// may share a fencing token; a writer's token is larger than that of every
// reader before it. Lease.Shared says which kind was granted.
func Shared() LockOption { return func(s *lockSettings) { s.shared = true } }

// Permits takes one of n permits of a semaphore instead of a lock: at most
// n holders at once (n from 2 to the daemon's lock.max_permits, 64 by
// default; 0 or 1 is a lock). Every holder must ask for the same n: another
// n fails with ErrFailedPrecondition while permits are out. Each permit is a
// lock on one of n slots: Lease.Slot says which, and fencing tokens increase
// per slot. A permit is never shared.
func Permits(n int) LockOption { return func(s *lockSettings) { s.permits = n } }

// ReentrancyKey names the acquisition with a job or trace id (at most 128
// bytes) only your own work knows: while the daemon holds the lock for an
// acquisition with this key, another one with it gets the same lock (the
// same value and fencing token) at once and counts up; each release counts
// one down, and the lock is released at zero. A Hold session is one hold.
// Per daemon; the key is never logged. The same key asking for another mode
// or number of permits fails with ErrFailedPrecondition.
func ReentrancyKey(key string) LockOption { return func(s *lockSettings) { s.key = key } }

// mode is the wire's lock mode for these settings.
func (s lockSettings) mode() pb.LockMode {
	if s.shared {
		return pb.LockMode_LOCK_MODE_SHARED
	}
	return pb.LockMode_LOCK_MODE_EXCLUSIVE
}

func settingsOf(resource string, wait time.Duration, opts []LockOption) (lockSettings, error) {
	s := apply(wait, opts)
	if err := printable("resource", resource, 1, maxResourceBytes); err != nil {
		return s, err
	}
	return s, s.check()
}

// setSettingsOf checks AcquireMany's resources (1 to MaxSet names, counted
// as given, repeats too, as the daemon counts them) and options: a set's
// locks are exclusive, without permits or a reentrancy key.
func setSettingsOf(resources []string, opts []LockOption) (lockSettings, error) {
	s := apply(0, opts)
	if len(resources) < 1 || len(resources) > MaxSet {
		// The daemon's words (src/api/request.rs).
		return s, invalid("resources", "%d names; 1 to %d are allowed", len(resources), MaxSet)
	}
	for i, resource := range resources {
		if wrong := notPrintable(resource, 1, maxResourceBytes); wrong != "" {
			return s, invalid("resources", "[%d] %s", i, wrong)
		}
	}
	const exclusive = "a set's locks are exclusive, without permits or a reentrancy key"
	switch {
	case s.shared:
		return s, invalid("mode", exclusive)
	case s.permits >= 2:
		return s, invalid("permits", exclusive)
	case s.key != "":
		return s, invalid("reentrancy_key", exclusive)
	case s.lockDelay != 0:
		return s, invalid("lock_delay", "a set takes no lock delay (docs/design.md#lock-delay)")
	}
	return s, s.check()
}

// apply is the settings opts give, from the defaults.
func apply(wait time.Duration, opts []LockOption) lockSettings {
	s := lockSettings{ttl: 10 * time.Second, wait: wait}
	for _, opt := range opts {
		opt(&s)
	}
	return s
}

// check is the daemon's rules for the options.
func (s lockSettings) check() error {
	if err := printable("owner", s.owner, 0, maxOwnerBytes); err != nil {
		return err
	}
	if s.permits < 0 || int64(s.permits) > math.MaxUint32 {
		return invalid("permits", "%d is not a number of permits (0 or 1: a lock; n >= 2: a semaphore)", s.permits)
	}
	if s.shared && s.permits >= 2 {
		// The daemon's words (src/api/request.rs).
		return invalid("permits", "a shared lock takes no permits: set permits to 0 or 1, or mode to LOCK_MODE_EXCLUSIVE")
	}
	// The key itself is never shown.
	if len(s.key) > maxReentrancyKeyBytes {
		return invalid("reentrancy_key", "is %d bytes; at most %d are allowed", len(s.key), maxReentrancyKeyBytes)
	}
	if !utf8.ValidString(s.key) {
		// gRPC would refuse to send it: a proto3 string is UTF-8.
		return invalid("reentrancy_key", "is not valid UTF-8")
	}
	for _, d := range []struct {
		field string
		value time.Duration
	}{{"ttl", s.ttl}, {"wait", s.wait}, {"max_hold", s.maxHold}, {"lock_delay", s.lockDelay}} {
		if d.value < 0 {
			p := durationpb.New(d.value)
			return invalid(d.field, "%ds %dns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)", p.Seconds, p.Nanos)
		}
	}
	return nil
}

// printable is the daemon's rule for text fields, in its words.
func printable(field, value string, least, most int) error {
	if wrong := notPrintable(value, least, most); wrong != "" {
		return invalid(field, "%s", wrong)
	}
	return nil
}

// notPrintable is what is wrong with value as least to most bytes of
// printable UTF-8, in the daemon's words; "" when nothing is.
func notPrintable(value string, least, most int) string {
	if len(value) < least || len(value) > most {
		return fmt.Sprintf("is %d bytes long; it must be %d to %d bytes of printable UTF-8", len(value), least, most)
	}
	if !utf8.ValidString(value) {
		// gRPC would refuse to send it: a proto3 string is UTF-8.
		return fmt.Sprintf("is not valid UTF-8; it must be %d to %d bytes of printable UTF-8", least, most)
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return fmt.Sprintf("contains the control character %s; only printable UTF-8 is allowed", rustDebug(r))
		}
	}
	return ""
}

// rustDebug writes a control character as the daemon's message does (Rust's
// `{:?}` of a char): '\n', '\t', '\r', '\0', else '\u{7f}'.
func rustDebug(r rune) string {
	switch r {
	case '\n':
		return `'\n'`
	case '\t':
		return `'\t'`
	case '\r':
		return `'\r'`
	case 0:
		return `'\0'`
	}
	return fmt.Sprintf(`'\u{%s}'`, strings.ToLower(fmt.Sprintf("%x", r)))
}
