//! Every quorum decision (docs/design.md#the-fencing-token): majorities,
//! validity, tokens, round two, and when a release or extension is decided.

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
