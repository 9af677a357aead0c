//! Semaphores (docs/design.md#semaphores): N permits of a resource are N
//! slots, each an ordinary exclusive lock with its own fence counter
//! values, so each inherits the quorum, fencing, quarantine and Hold
//! machinery. Permits are never counted across masters.

use super::acquire::Attempt;
use super::fanout::gather;
use super::node::Node;
use super::vote::FailureReason;
use super::{Engine, Lease, Lifetime, LockValue, Permit};

/// The lock name of slot `slot` of the semaphore named `name` (apart from
/// every lock name, which starts with `lock:` or `tenant:`).
pub fn slot_name(name: &str, slot: u32) -> String {
    format!("permit:{slot}:{name}")
}

/// The name under which the masters remember the semaphore's number of
/// permits.
pub fn permits_name(name: &str) -> String {
    format!("permits:{name}")
}

impl<N: Node> Engine<N> {
    /// One attempt at a permit of `name`, a semaphore of `n`: agree on `n`
    /// with a quorum (one round that also says which slots are held), then
    /// try the slots held on the fewest masters, in turn, each as a lock.
    pub(super) async fn attempt_permit(
        &self,
        name: &str,
        n: u32,
        Lifetime { ttl, lock_delay }: Lifetime,
        holder: &str,
    ) -> Result<Lease, Attempt> {
        let permits_key = self.lock_key(&permits_name(name));
        let slots: Vec<String> = (0..n).map(|slot| self.lock_key(&slot_name(name, slot))).collect();
        let calls = (self.nodes.iter())
            .map(|node| async { node.agree_permits(&permits_key, &slots, n, ttl + lock_delay).await.ok() });
        let (answers, _) = gather(calls, |_| false, self.config.node_timeout).await;
        let answers: Vec<_> = answers.into_iter().flatten().flatten().collect();
        let agreed: Vec<&Vec<bool>> = (answers.iter())
            .filter(|a| a.held_with.is_none() && a.slots_held.len() == slots.len())
            .map(|a| &a.slots_held)
            .collect();
        if agreed.len() < self.quorum() {
            if let Some(held) = answers.iter().find_map(|a| a.held_with) {
                return Err(Attempt::Differ(held));
            }
            let (reached, votes) = (answers.len(), Vec::new());
            return Err(Attempt::Unreachable { reached, votes });
        }
        // Fewest holding masters first; ties at random, so holders spread.
        let mut order: Vec<(usize, u64, u32)> = (0..n)
            .map(|slot| {
                let holding = agreed.iter().filter(|held| held[slot as usize]).count();
                (holding, fastrand::u64(..), slot)
            })
            .collect();
        order.sort_unstable();
        let mut refused = Attempt::Failed(FailureReason::Taken, Vec::new());
        for (holding, _, slot) in order {
            if holding >= self.quorum() {
                // Held by a majority: taken, as are the slots after it.
                break;
            }
            let value = LockValue::random_permit(Permit { of: n, slot }).delayed(lock_delay);
            match self.attempt(&slots[slot as usize], &value, ttl, holder).await {
                Ok((fencing_token, validity)) => {
                    let resource = name.to_owned();
                    return Ok(Lease {
                        resource,
                        value,
                        fencing_token,
                        validity,
                    });
                }
                Err(failure @ Attempt::Failed(..)) => refused = failure,
                Err(other) => return Err(other),
            }
        }
        Err(refused)
    }
}

#[cfg(test)]
#[path = "permits_tests.rs"]
mod tests;
