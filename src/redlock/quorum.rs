//! Pure Redlock arithmetic: quorum size, the validity formula, and minting a
//! fencing token from round-1 counters (docs/design.md#the-fencing-token). Everything here is a
//! function of its arguments, so it is tested exhaustively without IO.

use std::time::Duration;

/// The fixed part of the clock-drift margin (docs/design.md#acquire, step 5).
const DRIFT_FLOOR: Duration = Duration::from_millis(2);

/// The most nodes a cluster may have: a token's low 4 bits name a node.
pub(crate) const MAX_NODES: usize = 16;

/// The number of nodes that make a majority of `n`.
pub(crate) const fn quorum(n: usize) -> usize {
    n / 2 + 1
}

/// The clock-drift margin for a lock of `ttl`: `ttl * drift_factor + 2 ms`.
pub(crate) fn drift(ttl: Duration, drift_factor: f64) -> Duration {
    ttl.mul_f64(drift_factor) + DRIFT_FLOOR
}

/// What is left of a lock's life after the rounds took `elapsed`:
/// `ttl - elapsed - drift` (step 5), or `None` when nothing is left.
///
/// This is the only place the formula is written; acquire and extend both
/// call it.
pub(crate) fn validity(ttl: Duration, elapsed: Duration, drift_factor: f64) -> Option<Duration> {
    ttl.checked_sub(elapsed)?
        .checked_sub(drift(ttl, drift_factor))
        .filter(|left| !left.is_zero())
}

/// The outcome of round 1 as far as the token is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Minted {
    /// `T`: the largest counter any granting node returned.
    pub max: u64,
    /// `S`: the indices of the nodes that returned `T`, ascending.
    pub at_max: Vec<usize>,
}

impl Minted {
    /// Looks at the counters of round 1 (`None` for a node that did not grant)
    /// and finds `T` and `S`; `None` when no node granted.
    pub(crate) fn from_counters(counters: &[Option<u64>]) -> Option<Minted> {
        let max = counters.iter().flatten().copied().max()?;
        let at_max = counters
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == Some(max))
            .map(|(i, _)| i)
            .collect();
        Some(Minted { max, at_max })
    }

    /// Whether round 2 can be skipped: a majority of the `n` nodes already
    /// stores `T` and holds the lock (the common case in a healthy cluster).
    pub(crate) fn is_published(&self, n: usize) -> bool {
        self.at_max.len() >= quorum(n)
    }

    /// The fencing token: `T * 16 + lowest index in S`. Two grants with the
    /// same `T` have disjoint `S` (each node hands out each counter once), so
    /// their lowest indices, and their tokens, differ.
    pub(crate) fn token(&self) -> u64 {
        fencing_token(self.max, self.at_max[0])
    }

    /// A shared holder's token (docs/design.md#shared-locks): `max` with
    /// the highest index, so it is at least every exclusive token minted
    /// from a counter up to `max`, and below every one minted from a higher
    /// counter. Readers mint nothing: two of them may share it.
    pub(crate) fn read_token(&self) -> u64 {
        fencing_token(self.max, MAX_NODES - 1)
    }
}

/// `counter * 16 + node_index`, the wire form of a fencing token.
pub(crate) fn fencing_token(counter: u64, node_index: usize) -> u64 {
    debug_assert!(node_index < MAX_NODES);
    counter * MAX_NODES as u64 + node_index as u64
}

/// What a round's votes decide (docs/design.md#acquire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// A quorum granted (or stored): the lock is taken.
    Granted,
    /// Enough nodes answered, but too few granted: held elsewhere.
    Taken,
    /// Fewer than a quorum answered at all: nothing can be told.
    Unreachable,
}

/// What `granted` grants out of `reached` nodes that answered (a grant or a
/// refusal) decide among `n`.
pub(crate) fn decide(granted: usize, reached: usize, n: usize) -> Decision {
    if granted >= quorum(n) {
        Decision::Granted
    } else if reached < quorum(n) {
        Decision::Unreachable
    } else {
        Decision::Taken
    }
}

/// Whether a round may stop waiting for the slower nodes: a quorum has
/// granted already (their locks, if any, go with the release to all).
pub(crate) fn enough_granted(granted: usize, n: usize) -> bool {
    granted >= quorum(n)
}

/// Round 2: how many of the holders behind `T` must store it, when
/// `at_max` nodes returned `T` already, for `W = S ∪ stored` to be a
/// majority of `n`.
pub(crate) fn stores_needed(at_max: usize, n: usize) -> usize {
    quorum(n).saturating_sub(at_max)
}

/// Whether one lock's extension is decided, with `yes` nodes that extended
/// it and `no` that no longer hold it, among `n`: extended by a quorum, or
/// refused by more than can be spared (a lost lock does not wait for a
/// slow node).
pub(crate) fn extension_decided(yes: usize, no: usize, n: usize) -> bool {
    yes >= quorum(n) || no > n - quorum(n)
}

/// Whether a release is decided, with `held` nodes that deleted the lock,
/// `not_held` that did not hold it and `pending` not answered yet (the
/// rest failed): a quorum deleted it; or a quorum answered and "held" can
/// no longer reach one; or failures leave too few to answer at all. Then
/// no pending answer can change what `tally` says.
pub(crate) fn release_decided(held: usize, not_held: usize, pending: usize, n: usize) -> bool {
    let q = quorum(n);
    held >= q || (held + pending < q && held + not_held >= q) || held + not_held + pending < q
}

/// The nodes that said yes, when at least a quorum of the `answers` (one
/// per node; `None` for no answer) came; `Err(reached)` otherwise.
///
/// # Errors
/// How many answered, when fewer than a quorum did.
pub(crate) fn tally(answers: &[Option<bool>]) -> Result<usize, usize> {
    let reached = answers.iter().flatten().count();
    if reached < quorum(answers.len()) {
        return Err(reached);
    }
    Ok(answers.iter().filter(|a| **a == Some(true)).count())
}

/// Whether `yes` nodes of `n` are a majority (a lock held, extended or
/// agreed on).
pub(crate) fn majority(yes: usize, n: usize) -> bool {
    yes >= quorum(n)
}

/// Too few nodes answered to read the counters a repair raises a node's
/// to (`repair_floor`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{verified} verified and {answered} nodes in all answered; {needed} verified, or every verified node and {needed} in \
     all, are needed to read the counters from"
)]
pub(crate) struct TooFewAnswers {
    /// Verified nodes that answered.
    pub(crate) verified: usize,
    /// Nodes that answered, verified or not.
    pub(crate) answered: usize,
    /// A quorum.
    pub(crate) needed: usize,
}

/// The floor a returning node's fence counter is repaired to
/// (docs/design.md#repair), from what the other nodes answered: per node,
/// whether it is verified and its counter (`None`: no answer; `Some(None)`:
/// no counter yet). The largest counter among a quorum of verified nodes;
/// or, when fewer are verified but every verified node answered, the
/// largest of all that answered (a new cluster has no verified node).
///
/// # Errors
/// When too few answered for either rule, saying how many did.
pub(crate) fn repair_floor(answers: &[(bool, Option<Option<u64>>)], n: usize) -> Result<Option<u64>, TooFewAnswers> {
    let needed = quorum(n);
    let from_verified: Vec<Option<u64>> = answers.iter().filter(|(v, _)| *v).filter_map(|(_, c)| *c).collect();
    let all_verified_answered = answers.iter().all(|(v, c)| !v || c.is_some());
    let answered: Vec<Option<u64>> = answers.iter().filter_map(|(_, c)| *c).collect();
    if from_verified.len() >= needed {
        Ok(from_verified.into_iter().flatten().max())
    } else if all_verified_answered && answered.len() >= needed {
        Ok(answered.into_iter().flatten().max())
    } else {
        Err(TooFewAnswers {
            verified: from_verified.len(),
            answered: answered.len(),
            needed,
        })
    }
}

#[cfg(test)]
#[path = "quorum_tests.rs"]
mod tests;
