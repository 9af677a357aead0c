//! What the nodes said, and what an operation made of it: the vote of each
//! node in a round, why an acquisition failed, and a quorum view.

use std::time::Duration;

use super::Lease;
use super::node::Standing;

/// What one node said in round 1 of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeVote {
    /// Locked; the node's fence counter.
    Granted(u64),
    /// Another value holds the key there.
    Taken,
    /// No answer within the per-node timeout.
    TimedOut,
    /// The node answered with an error (or refused the connection).
    Errored(String),
    /// Not asked: the node is quarantined (it may have lost locks).
    Quarantined,
    /// Not asked: the node failed preflight or is not verified yet.
    Unusable(String),
    /// Asked, but a quorum had granted before it answered; its lock, if
    /// any, goes with the release to all.
    NotAwaited,
}

impl NodeVote {
    /// A node the round left without an answer: cut off by the round's
    /// limit, or not needed once the outcome was known.
    pub(super) fn unanswered(timed_out: bool) -> NodeVote {
        if timed_out {
            NodeVote::TimedOut
        } else {
            NodeVote::NotAwaited
        }
    }

    /// A short name of the kind of vote, for messages and error details.
    pub fn kind(&self) -> &'static str {
        match self {
            NodeVote::Granted(_) => "granted",
            NodeVote::Taken => "held by another owner",
            NodeVote::TimedOut => "timed out",
            NodeVote::Errored(_) => "errored",
            NodeVote::Quarantined => "quarantined",
            NodeVote::Unusable(_) => "unusable",
            NodeVote::NotAwaited => "not awaited",
        }
    }

    /// Whether the node answered at all (grant or refusal).
    pub(super) fn reached(&self) -> bool {
        matches!(self, NodeVote::Granted(_) | NodeVote::Taken)
    }
}

/// Why an acquisition ended without a lock, when that is not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureReason {
    /// Enough nodes answered, but the lock is held elsewhere.
    Taken,
    /// A quorum granted, but the rounds used up the validity.
    ValidityUsedUp {
        /// What was left (below `min_validity`, possibly zero).
        left: Duration,
    },
}

/// The result of `Engine::acquire`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The lock is held.
    Granted(Lease),
    /// The wait ran out without a lock.
    NotGranted {
        /// Why the last attempt failed.
        reason: FailureReason,
        /// How many attempts were made.
        attempts: u32,
        /// What each node said in the last attempt.
        votes: Vec<NodeVote>,
    },
}

/// The result of `Engine::hand_off`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOff {
    /// Whether a majority still held the old lock (it was held to the end).
    pub old_held: bool,
    /// The new owner's lock, when a quorum granted it.
    pub lease: Option<Lease>,
    /// A master saw the lock marked as waited for by another daemon: one of
    /// its waiters was refused since the last announced release.
    pub waited: bool,
}

/// A quorum view of one resource (no lock values in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// A majority holds the same value.
    pub held: bool,
    /// Who holds it, as a majority recorded it (when `held` exclusively).
    pub holder: Option<super::holder::Holder>,
    /// Shared holders, as the quorum-th node counts them (0 unless a
    /// majority shows the lock shared).
    pub readers: u32,
    /// A semaphore's number of permits, as a majority remembers it (0:
    /// none), and how many of its slots a majority holds.
    pub permits: u32,
    /// See `permits`.
    pub permits_out: u32,
    /// How many nodes hold the most common value.
    pub agreeing: usize,
    /// The majority size.
    pub quorum: usize,
    /// Per node, in index order.
    pub nodes: Vec<NodeInspection>,
}

/// One node in an `Inspection`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInspection {
    /// `host:port`.
    pub name: String,
    /// Its standing.
    pub standing: Standing,
    /// It answered.
    pub reachable: bool,
    /// It holds a lock key for the resource.
    pub held: bool,
    /// Its value is the most common one.
    pub with_majority: bool,
    /// Time left on its key.
    pub ttl: Option<Duration>,
    /// Its fence counter.
    pub fence: Option<u64>,
}

/// "3 granted, 1 timed out, 1 quarantined": what the nodes said, by kind.
pub fn summarize(votes: &[NodeVote]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for vote in votes {
        let kind = vote.kind();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    parts.join(", ")
}
