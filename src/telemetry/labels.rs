//! The values of the metrics' bounded labels, as types: callers say what
//! happened, `metrics.rs` writes the label (docs/operations.md#metrics).

/// How an operation ended, as a label value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Acquired / extended / released.
    Success = 0,
    /// Not acquired / not extended / not held any more.
    Fail,
    /// An error (no quorum, cancelled, deadline…).
    Error,
}

impl Status {
    /// Every status, in label order (`Status as usize` indexes it).
    pub const ALL: [Status; 3] = [Status::Success, Status::Fail, Status::Error];

    /// The label value.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Fail => "fail",
            Status::Error => "error",
        }
    }
}

/// A kind of lock, `redlockd_acquire_by_kind_total{kind}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// An exclusive lock.
    Exclusive = 0,
    /// A shared (read) lock.
    Shared,
    /// A permit of a semaphore.
    Permit,
    /// A set of locks taken together.
    Set,
}

impl LockKind {
    /// Every kind, in label order.
    pub const ALL: [LockKind; 4] = [LockKind::Exclusive, LockKind::Shared, LockKind::Permit, LockKind::Set];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            LockKind::Exclusive => "exclusive",
            LockKind::Shared => "shared",
            LockKind::Permit => "permit",
            LockKind::Set => "set",
        }
    }
}

/// Why an acquisition ended without a lock,
/// `redlock_acquire_failures_total{reason}` (and the trace's outcome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Held elsewhere, and the request would not wait.
    Taken,
    /// A semaphore held with another number of permits.
    PermitsDiffer,
    /// A reentrancy key holding the lock as another kind.
    HeldAsOtherKind,
    /// Held elsewhere until the request's wait ran out.
    WaitTimedOut,
    /// A quorum granted, but the rounds used up the validity.
    ValidityUsedUp,
    /// Too few masters answered.
    NoQuorum,
    /// The caller went away.
    Cancelled,
    /// The request's deadline passed.
    Deadline,
    /// A limit of this daemon's or a tenant's quota.
    Limit,
    /// Anything else (invalid, shutting down, a bug).
    Other,
}

impl Failure {
    /// Every reason, in label order.
    pub const ALL: [Failure; 10] = [
        Failure::Taken,
        Failure::PermitsDiffer,
        Failure::HeldAsOtherKind,
        Failure::WaitTimedOut,
        Failure::ValidityUsedUp,
        Failure::NoQuorum,
        Failure::Cancelled,
        Failure::Deadline,
        Failure::Limit,
        Failure::Other,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Taken => "taken",
            Failure::PermitsDiffer => "permits_differ",
            Failure::HeldAsOtherKind => "held_as_other_kind",
            Failure::WaitTimedOut => "wait_timed_out",
            Failure::ValidityUsedUp => "validity_used_up",
            Failure::NoQuorum => "no_quorum",
            Failure::Cancelled => "cancelled",
            Failure::Deadline => "deadline",
            Failure::Limit => "limit",
            Failure::Other => "other",
        }
    }
}

/// How a release that would hand the lock to the next waiter here ended,
/// `redlock_handoffs_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    /// The waiter holds the lock.
    Handed,
    /// A quorum did not swap it (it was no longer held).
    Failed,
    /// Too few masters answered.
    Unavailable,
}

impl HandOff {
    /// Every outcome, in label order.
    pub const ALL: [HandOff; 3] = [HandOff::Handed, HandOff::Failed, HandOff::Unavailable];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            HandOff::Handed => "handed",
            HandOff::Failed => "failed",
            HandOff::Unavailable => "unavailable",
        }
    }
}

/// What became of a leadership through this daemon,
/// `redlockd_elections_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leadership {
    /// A candidate was elected.
    Elected,
    /// A leader lost its lock.
    Lost,
    /// A leader resigned.
    Resigned,
}

impl Leadership {
    /// Every outcome, in label order.
    pub const ALL: [Leadership; 3] = [Leadership::Elected, Leadership::Lost, Leadership::Resigned];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Leadership::Elected => "elected",
            Leadership::Lost => "lost",
            Leadership::Resigned => "resigned",
        }
    }
}
