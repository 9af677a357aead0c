//! What goes in and out of a session (docs/design.md#sessions): the plan a
//! transport validated, the client's inputs, the session's events and how
//! each must travel, and the two traits a transport implements.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use crate::locks::error::Error;
use crate::redlock::{FailureReason, Kind, Lease, NodeVote};

/// A session's TTL must be at least this many per-node timeouts, so that an
/// extension round fits between its schedule and LOST.
pub(crate) const MIN_TTL_IN_NODE_TIMEOUTS: u32 = 8;

/// What a session holds and for how long, fixed at its start (validated by
/// the transport).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The resource as the client named it (events carry it back).
    pub resource: String,
    /// Its lock name (namespaced by tenant).
    pub name: String,
    pub kind: Kind,
    /// The acquisition's reentrancy key (docs/design.md#reentrancy).
    pub reentrancy_key: Option<String>,
    pub ttl: Duration,
    /// How long to wait for the lock.
    pub wait: Duration,
    /// When the session releases by itself, counted from the grant.
    pub max_hold: Duration,
    /// How long the lock is kept after the session ends without a release
    /// (docs/design.md#lock-delay); zero: released at once.
    pub lock_delay: Duration,
    /// A candidacy, when the session campaigns in an election
    /// (docs/design.md#elections): it waits until elected, however long.
    pub campaign: Option<Box<Candidacy>>,
}

/// What a campaigning session publishes when elected.
#[derive(Debug, Clone)]
pub(crate) struct Candidacy {
    /// The candidate's name.
    pub candidate: String,
    /// The value it publishes (and proclaims anew).
    pub value: Vec<u8>,
}

/// What the client asks of an open session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Release the lock (resign) and end the session.
    Release,
    /// Publish a new value (a campaign, once elected).
    Proclaim(Vec<u8>),
}

/// What the transport read from the client next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// A command.
    Command(Command),
    /// The client closed its side cleanly: release, as if asked.
    Finished,
    /// The client sent what a session cannot take (a second `start`, an
    /// empty request): release, saying why.
    Refused(&'static str),
    /// The client is gone (a broken stream): release without a word.
    Gone,
}

/// Why a session lost its lock: the client must stop at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// No extension reached a quorum before the validity was about to end.
    NotExtendedInTime,
    /// A quorum of masters no longer held it for this session.
    ExpiredOrTakenOver,
    /// An operator took it away (`Admin/ForceRelease`).
    TakenAway,
    /// Its election record could not be written on a majority.
    NotRecorded,
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Lost::NotExtendedInTime => "the lock could not be extended in time",
            Lost::ExpiredOrTakenOver => "the lock expired or was taken over",
            Lost::TakenAway => "the lock was taken away by an operator (ForceRelease)",
            Lost::NotRecorded => "the election's record could not be written on a majority of masters",
        })
    }
}

/// Why a session released its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// The client asked, or closed its side.
    ByClient,
    /// `max_hold` was used up.
    MaxHoldUsedUp,
    /// The daemon is shutting down.
    ShuttingDown,
    /// The client sent what the session could not take.
    Refused(&'static str),
    /// A `Resign` call named this leader's term.
    Resigned,
}

impl fmt::Display for Released {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Released::ByClient => "released by the client",
            Released::MaxHoldUsedUp => "max_hold used up",
            Released::ShuttingDown => "the daemon is shutting down",
            Released::Refused(why) => why,
            Released::Resigned => "resigned by a Resign call",
        })
    }
}

/// What a session tells its client.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// The lock is held, valid for `validity` from now; a campaign's
    /// `published` value is recorded beside it (ELECTED).
    Acquired {
        lease: &'a Lease,
        validity: Duration,
        published: Option<&'a [u8]>,
    },
    /// Someone else held it for the whole wait; the session is over.
    NotAcquired {
        reason: FailureReason,
        votes: &'a [NodeVote],
    },
    /// Extended: valid for `validity` from now.
    Extended { lease: &'a Lease, validity: Duration },
    /// A campaign's new value is published.
    Proclaimed { value: &'a [u8] },
    /// A campaign ended before it was elected (the client withdrew).
    Withdrawn(Released),
    /// The lock is lost; it is released next.
    Lost(Lost),
    /// Released; `held_to_end` when a quorum still held it for this session.
    Released { held_to_end: bool, why: Released },
    /// The session could not start (no quorum, a quota, the daemon closing).
    Failed(Error),
}

/// How an event must travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// However many wait for a slow reader (a session sends few such).
    Always,
    /// Dropped when a slow reader has a few waiting already: a stale
    /// EXTENDED would make the client count validity too late.
    IfRoom,
    /// The session's last word: drops the `IfRoom` events still waiting,
    /// so that the client learns of LOST at once.
    Last,
}

/// Why a transport did not take an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `IfRoom`, and the reader is behind.
    Full,
    /// The client is gone.
    Closed,
}

/// What the client sends a session, as its transport reads it.
pub(crate) trait Inputs: Send + 'static {
    /// The client's next input; `Gone` once it has left.
    fn next(&mut self) -> impl Future<Output = Input> + Send;
}

/// A session's way to its client.
pub(crate) trait Events: Send + Sync + 'static {
    /// Passes `event` to the client.
    ///
    /// # Errors
    /// `Closed` when the client is gone, `Full` for an `IfRoom` event the
    /// reader has no room for.
    fn tell(&self, resource: &str, event: Event<'_>, delivery: Delivery) -> Result<(), Refused>;
    /// Resolves once the client is gone.
    fn closed(&self) -> impl Future<Output = ()> + Send + '_;
    /// `closed`, owning what it needs (for the acquisition's own task).
    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static;
    /// Whether the client is gone.
    fn is_closed(&self) -> bool;
}
