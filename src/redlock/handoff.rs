//! Handing a lock straight to the next local waiter in one round
//! (docs/design.md#hand-off).

use tokio::time::Instant;

use super::fanout::gather;
use super::node::{Announce, Node, Standing, Swap};
use super::vote::{HandOff, NodeVote};
use super::{Engine, Error, Lease, Lifetime, LockValue, quorum};

impl<N: Node> Engine<N> {
    /// Hands the lock `old` on `resource` straight to a new owner (the next
    /// waiter in this daemon) in one round instead of a release, a
    /// published wake-up and a new acquisition: every usable node swaps
    /// `old` (or a free key) for a fresh value with `lifetime` (its lock
    /// delay in the value: docs/design.md#lock-delay), advancing its
    /// fence counter; the token is minted from those counters exactly as in
    /// an acquisition (round 2 when needed), so it outranks every earlier
    /// grant. Nodes not usable for acquisitions only release `old`.
    ///
    /// On failure the new value is removed from every node and `old` is
    /// released (and announced) as by `release`.
    ///
    /// # Errors
    /// `Error::Unavailable` when fewer than a quorum of nodes answered.
    pub async fn hand_off(
        &self,
        resource: &str,
        old: &LockValue,
        lifetime: impl Into<Lifetime>,
        holder: &str,
    ) -> Result<HandOff, Error> {
        let key = self.lock_key(resource);
        let Lifetime { ttl, lock_delay } = lifetime.into();
        let new = LockValue::random().delayed(lock_delay);
        let key_ttl = new.key_ttl(ttl);
        let t0 = Instant::now();
        let calls = self.nodes.iter().map(|node| {
            let (key, new) = (&key, &new);
            async move {
                let usable = matches!(node.standing_of(key), Standing::Usable);
                let answer = if usable {
                    node.hand_off(key, old.expose(), new.expose(), key_ttl, holder).await
                } else {
                    node.unlock(key, old.expose(), Announce::No).await.map(|was_held| Swap {
                        was_held,
                        counter: None,
                        waited: false,
                    })
                };
                match answer {
                    Ok(
                        swap @ Swap {
                            counter: Some(counter), ..
                        },
                    ) => (Some(swap), NodeVote::Granted(counter)),
                    Ok(swap) if usable => (Some(swap), NodeVote::Taken),
                    Ok(swap) => (Some(swap), NodeVote::Unusable("not verified".into())),
                    Err(e) => (None, NodeVote::Errored(e.to_string())),
                }
            }
        });
        // Decided once a quorum swapped the old lock for the new one (the
        // rest are covered by release-to-all, as in round 1); otherwise
        // every answer is awaited.
        let n = self.nodes.len();
        let swapped = |answers: &[Option<(Option<Swap>, NodeVote)>]| {
            let swapped = answers
                .iter()
                .filter(|a| matches!(a, Some((Some(Swap { was_held: true, .. }), NodeVote::Granted(_)))))
                .count();
            quorum::enough_granted(swapped, n)
        };
        let (answers, timed_out) = gather(calls, swapped, self.config.node_timeout).await;
        let (swaps, votes): (Vec<Option<Swap>>, Vec<NodeVote>) = answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| (None, NodeVote::unanswered(timed_out))))
            .unzip();
        let held: Vec<Option<bool>> = swaps.iter().map(|s| s.map(|s| s.was_held)).collect();
        // Any master that saw the mark: a waiter elsewhere was refused. Only
        // the answers awaited count; a refusal marks every master holding
        // the lock, so a quorum's answers see it.
        let waited = swaps.iter().flatten().any(|s| s.waited);
        match self.granted(&key, &new, ttl, t0, votes).await {
            Ok((fencing_token, validity)) => Ok(HandOff {
                old_held: self.tally(&held).is_ok_and(|yes| quorum::majority(yes, n)),
                waited,
                lease: Some(Lease {
                    resource: resource.to_owned(),
                    value: new,
                    fencing_token,
                    validity,
                }),
            }),
            Err(_) => {
                // Cleaned up as a failed attempt, then released as usual.
                self.unlock_all(&key, &new, Announce::No).await;
                // Our own waiter is next: announce even unmarked.
                let released = self.unlock_all(&key, old, Announce::Always).await;
                let was_held: Vec<Option<bool>> = held
                    .iter()
                    .zip(&released)
                    .map(|(swap, unlock)| match (swap, unlock) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        _ => None,
                    })
                    .collect();
                Ok(HandOff {
                    old_held: quorum::majority(self.tally(&was_held)?, n),
                    lease: None,
                    waited,
                })
            }
        }
    }
}

#[cfg(test)]
#[path = "handoff_tests.rs"]
mod tests;
