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
mod tests {
    use super::*;

    #[test]
    fn a_quorum_is_a_strict_majority() {
        for n in 1..=MAX_NODES {
            let q = quorum(n);
            assert!(2 * q > n, "{q} of {n} is not a majority");
            assert!(2 * (q - 1) <= n, "{q} of {n} is more than needed");
        }
    }

    #[test]
    fn two_disjoint_quorums_cannot_exist() {
        // Every pair of subsets of 5 nodes that are both quorums intersect.
        let n = 5;
        for a in 0u32..(1 << n) {
            for b in 0u32..(1 << n) {
                let both = a.count_ones() as usize >= quorum(n) && b.count_ones() as usize >= quorum(n);
                if both {
                    assert_ne!(a & b, 0, "{a:05b} and {b:05b} are disjoint quorums");
                }
            }
        }
    }

    #[test]
    fn validity_subtracts_elapsed_and_drift() {
        let ttl = Duration::from_secs(10);
        // 10 s - 30 ms - (100 ms + 2 ms)
        assert_eq!(
            validity(ttl, Duration::from_millis(30), 0.01),
            Some(Duration::from_millis(9_868))
        );
    }

    #[test]
    fn validity_is_never_more_than_the_ttl_and_vanishes_when_used_up() {
        for ttl_ms in [1u64, 5, 100, 1_000, 30_000] {
            for elapsed_ms in [0u64, 1, 50, 99, 100, 1_000, 40_000] {
                let ttl = Duration::from_millis(ttl_ms);
                let elapsed = Duration::from_millis(elapsed_ms);
                match validity(ttl, elapsed, 0.01) {
                    Some(v) => {
                        assert!(v < ttl);
                        assert!(v + elapsed + drift(ttl, 0.01) == ttl);
                    }
                    None => assert!(elapsed + drift(ttl, 0.01) >= ttl),
                }
            }
        }
    }

    #[test]
    fn the_token_names_the_largest_counter_and_its_lowest_node() {
        let m = Minted::from_counters(&[Some(7), None, Some(9), Some(9), Some(8)]).unwrap();
        assert_eq!(m.max, 9);
        assert_eq!(m.at_max, vec![2, 3]);
        assert_eq!(m.token(), 9 * 16 + 2);
        assert!(!m.is_published(5));
    }

    #[test]
    fn round_two_is_skipped_only_when_a_majority_returned_the_max() {
        let agree = Minted::from_counters(&[Some(4), Some(4), Some(4), None, Some(3)]).unwrap();
        assert!(agree.is_published(5));
        let split = Minted::from_counters(&[Some(4), Some(4), Some(3), Some(3), None]).unwrap();
        assert!(!split.is_published(5));
        assert_eq!(Minted::from_counters(&[None, None, None]), None);
    }

    #[test]
    fn grants_with_the_same_max_on_disjoint_nodes_get_different_tokens() {
        let a = Minted::from_counters(&[Some(5), Some(5), None, None, None]).unwrap();
        let b = Minted::from_counters(&[None, None, Some(5), Some(5), Some(5)]).unwrap();
        assert_ne!(a.token(), b.token());
    }

    /// Every way the pending answers of a release could come (held, not
    /// held, failed): the outcomes `tally` could give.
    fn release_outcomes(held: usize, not_held: usize, pending: usize, n: usize) -> Vec<Result<bool, ()>> {
        let mut outcomes = Vec::new();
        for more_held in 0..=pending {
            for more_not in 0..=pending - more_held {
                let failed = n - (held + more_held) - (not_held + more_not);
                let mut answers = vec![Some(true); held + more_held];
                answers.extend(vec![Some(false); not_held + more_not]);
                answers.extend(vec![None; failed]);
                let outcome = tally(&answers).map(|yes| majority(yes, n)).map_err(drop);
                if !outcomes.contains(&outcome) {
                    outcomes.push(outcome);
                }
            }
        }
        outcomes
    }

    #[test]
    fn a_release_is_decided_exactly_when_no_pending_answer_can_change_its_outcome() {
        for n in [3, 5, 7, 9] {
            for held in 0..=n {
                for not_held in 0..=n - held {
                    for pending in 0..=n - held - not_held {
                        let decided = release_decided(held, not_held, pending, n);
                        let possible = release_outcomes(held, not_held, pending, n);
                        assert_eq!(
                            decided,
                            possible.len() == 1,
                            "n={n} held={held} not_held={not_held} pending={pending}: {possible:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn an_extension_is_decided_exactly_when_the_rest_cannot_change_yes_or_no() {
        for n in [3, 5, 7, 9] {
            for yes in 0..=n {
                for no in 0..=n - yes {
                    let rest = n - yes - no;
                    // The rest may all say yes, or all say no.
                    let could_be_yes = majority(yes + rest, n);
                    let could_be_lost = !majority(yes, n) && no + rest > 0;
                    let settled = !(could_be_yes && could_be_lost);
                    assert_eq!(extension_decided(yes, no, n), settled, "n={n} yes={yes} no={no}");
                    if extension_decided(yes, no, n) && !majority(yes, n) {
                        // Refused by more than can be spared: enough answered to say lost.
                        assert!(yes + no >= quorum(n), "n={n} yes={yes} no={no}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_round_grants_only_with_a_quorum_and_is_unreachable_only_below_one() {
        for n in [3, 5, 7] {
            for reached in 0..=n {
                for granted in 0..=reached {
                    let decision = decide(granted, reached, n);
                    assert_eq!(
                        decision == Decision::Granted,
                        2 * granted > n,
                        "n={n} {granted}/{reached}"
                    );
                    assert_eq!(decision == Decision::Unreachable, 2 * reached <= n && 2 * granted <= n);
                    assert_eq!(enough_granted(granted, n), decision == Decision::Granted);
                }
            }
        }
    }

    #[test]
    fn round_two_needs_what_the_holders_of_t_leave_of_a_majority() {
        for n in [3, 5, 7] {
            for at_max in 1..=n {
                let needed = stores_needed(at_max, n);
                assert!(majority(at_max + needed, n), "n={n} at_max={at_max}");
                assert!(needed == 0 || !majority(at_max + needed - 1, n));
            }
        }
    }

    #[test]
    fn a_tally_needs_a_quorum_of_answers() {
        assert_eq!(tally(&[Some(true), Some(false), None, None, None]), Err(2));
        assert_eq!(tally(&[Some(true), Some(false), Some(true), None, None]), Ok(2));
        assert_eq!(tally(&[Some(false); 3]), Ok(0));
    }
}
