//! Script proofs (docs/design.md#quarantine): the same process gets the same
//! variants, any other new ones.

use super::*;

#[test]
fn the_same_processes_get_the_same_variants_and_any_others_new_ones() {
    let proof = Proof::default();
    assert!(proof.in_use().is_none());
    let first = proof.to_load("a:1");
    let sha = first.round.sha.clone();
    proof.install(first);
    assert_eq!(proof.in_use().map(|v| v.round.sha.clone()), Some(sha.clone()));
    assert!(proof.holds_for("a:1") && !proof.holds_for("b:2"));
    proof.withdraw();
    assert!(proof.in_use().is_none() && !proof.holds_for("a:1"));
    // Withdrawn and verified again, the same process: the same text.
    assert_eq!(proof.to_load("a:1").round.sha, sha);
    // Other processes (a failover, and back: new replication ids).
    let other = proof.to_load("b:2");
    assert_ne!(other.round.sha, sha);
    assert_ne!(other.hand_off.sha, proof.to_load("a:1").hand_off.sha);
    assert_ne!(other.by_primary.sha, proof.to_load("a:1").by_primary.sha);
    proof.install(other);
    assert_ne!(proof.to_load("a:3").round.sha, sha);
}
