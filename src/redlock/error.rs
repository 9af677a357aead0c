//! The engine's own error: too few nodes answered, the caller gave up, or a
//! semaphore's permits disagree.
//! Contention is not an error (`Acquired::NotGranted`).

use super::vote::NodeVote;

/// Why an engine operation could not be decided.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Fewer than a quorum of nodes answered.
    #[error("only {reached} of the Redis masters could take part ({detail}); {needed} are needed for a quorum")]
    Unavailable {
        /// How many nodes answered.
        reached: usize,
        /// The quorum.
        needed: usize,
        /// What the nodes said, by kind.
        detail: String,
        /// What each node said, in index order (acquire only).
        votes: Vec<NodeVote>,
    },
    /// The caller went away between attempts; nothing is left held.
    #[error("the request was cancelled")]
    Cancelled,
    /// The semaphore's masters remember another number of permits
    /// (docs/design.md#semaphores): every holder must agree on it.
    #[error("permits: the semaphore is held with {held} permits; this request asked for {asked}")]
    PermitsDiffer {
        /// The number asked for.
        asked: u32,
        /// The number the masters remember.
        held: u32,
    },
}
