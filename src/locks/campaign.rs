//! Elections in the daemon (docs/design.md#elections): a campaign waits in
//! the election lock's queue until it is granted, records its term (the
//! lease's fencing token, exactly) and value beside the lock on a majority
//! of masters, and only then is elected; `Proclaim` and `Resign` act on the
//! leader of a term, from its stream or from any daemon.

use std::sync::Arc;

use tokio::time::Instant;

use crate::locks::Locks;
use crate::locks::error::Error;
use crate::locks::session::{Command, Delivery, Event, Events, Holding, Input, Inputs, Lost, Plan, Released};
use crate::locks::sessions::Revoked;
use crate::locks::who::{Who, audit};
use crate::redlock::election::Leader;
use crate::redlock::{Acquired, Node};
use crate::telemetry::labels::Leadership;

/// How many times a new leader's record is written before the lock is let go.
const RECORD_TRIES: usize = 3;

impl<N: Node> Locks<N> {
    /// Waits in the election's queue until elected (records written), the
    /// client withdraws or leaves, or the daemon shuts down; `None` when the
    /// candidacy ended (and the client was told why, if it is still there).
    pub(super) async fn campaign_until_elected<I: Inputs, E: Events>(
        self: &Arc<Self>,
        plan: Box<Plan>,
        mut who: Who,
        inputs: &mut I,
        events: &E,
    ) -> Option<Holding> {
        // The queue and the holder record name the candidate.
        who.owner.clone_from(&plan.campaign.as_deref()?.candidate);
        let tell = |event: Event<'_>| {
            let _ = events.tell(&plan.resource, event, Delivery::Last);
        };
        loop {
            // Dropping the acquisition (the client withdrew) leaves nothing
            // held: a grant that raced it is released by its own task.
            let asked = tokio::select! {
                asked = self.acquire_planned(&plan, &who, plan.wait, events) => asked,
                input = inputs.next() => {
                    match input {
                        Input::Gone => {}
                        Input::Command(Command::Release) | Input::Finished => tell(Event::Withdrawn(Released::ByClient)),
                        Input::Refused(why) => tell(Event::Withdrawn(Released::Refused(why))),
                        Input::Command(Command::Proclaim(_)) => tell(Event::Failed(Error::invalid(
                            "proclaim",
                            "a candidate may proclaim only once ELECTED; the candidacy ended",
                        ))),
                    }
                    return None;
                }
            };
            let (lease, granted) = match asked {
                // Its validity counts from now, not from when the record is
                // written (docs/design.md#elections).
                Ok(Acquired::Granted(lease)) => (lease, Instant::now()),
                // The wait ran out with another leader: wait on.
                Ok(Acquired::NotGranted { .. }) => continue,
                Err(Error::Cancelled) => {
                    if !events.is_closed() {
                        tell(Event::Failed(Error::ShuttingDown));
                    }
                    return None;
                }
                Err(error) => {
                    tell(Event::Failed(error));
                    return None;
                }
            };
            let candidacy = plan.campaign.as_deref()?;
            let record = (
                lease.fencing_token,
                candidacy.candidate.as_str(),
                candidacy.value.as_slice(),
            );
            // A master that answers late leaves the record short of a
            // majority in this round, though it may land: write it again
            // (the same term) before letting the lock go, so that an
            // observer never reads a term that was not told ELECTED.
            let mut recorded = Ok(false);
            for _ in 0..RECORD_TRIES {
                recorded = (self.engine)
                    .write_record(&plan.name, &lease.value, record, plan.ttl)
                    .await;
                if matches!(recorded, Ok(true)) {
                    break;
                }
            }
            match recorded {
                Ok(true) => {
                    audit("elected", &who, None, &lease.resource, Some(lease.fencing_token));
                    self.metrics.leadership(Leadership::Elected);
                    self.followed.changed(Some(&plan.name));
                    return Some(Holding::new(*plan, lease, granted, Box::new(who)));
                }
                // The lock is gone already, or too few masters took the
                // record: let it go and campaign on.
                Ok(false) | Err(_) => {
                    let _ = self.release(&lease.resource, &lease.value, &who).await;
                    tokio::time::sleep(self.node_timeout() * 2).await;
                }
            }
        }
    }

    /// Publishes `value` as the leader's (a `proclaim` on its stream).
    ///
    /// # Errors
    /// How the leadership is lost when a majority no longer holds it.
    pub(super) async fn proclaim_held<E: Events>(
        &self,
        held: &mut Holding,
        value: Vec<u8>,
        events: &E,
    ) -> Result<(), Lost> {
        let Some(candidacy) = held.terms.campaign.as_deref_mut() else {
            return Ok(());
        };
        let record = (held.lease.fencing_token, candidacy.candidate.as_str(), value.as_slice());
        match self
            .engine
            .write_record(&held.lease.resource, &held.lease.value, record, held.terms.ttl)
            .await
        {
            Ok(true) => {
                candidacy.value = value;
                self.followed.changed(Some(&held.lease.resource));
                let told = Event::Proclaimed {
                    value: &candidacy.value,
                };
                let _ = events.tell(&held.terms.resource, told, Delivery::Always);
                Ok(())
            }
            Ok(false) => Err(Lost::ExpiredOrTakenOver),
            Err(_) => Err(Lost::NotRecorded),
        }
    }

    /// The candidacy's hook after its lock was extended: the leader's
    /// record is kept as long as the lock. (A lock's session has none.)
    pub(super) async fn candidacy_extended(&self, held: &Holding) {
        if held.terms.campaign.is_none() {
            return;
        }
        let extended = self
            .engine
            .extend_record(&held.lease.resource, &held.lease.value, held.terms.ttl);
        if !matches!(extended.await, Ok(true)) {
            tracing::debug!(election = %held.terms.resource, "the election's record was not extended on a majority");
        }
    }

    /// The session's hook as it closes, before its lock is let go: how it
    /// is audited when `lost`, and, for a leader, the leadership's end
    /// (lost when `unasked`, else resigned).
    pub(super) fn candidacy_closing(&self, held: &Holding, unasked: bool, lost: bool) {
        let leads = held.terms.campaign.is_some();
        if lost {
            let event = if leads { "leader_lost" } else { "lost" };
            audit(
                event,
                &held.who,
                None,
                &held.lease.resource,
                Some(held.lease.fencing_token),
            );
        }
        if leads {
            let outcome = if unasked {
                Leadership::Lost
            } else {
                Leadership::Resigned
            };
            self.metrics.leadership(outcome);
        }
    }

    /// The candidacy's hook once its lock is released: the election's
    /// observers look.
    pub(super) fn candidacy_closed(&self, held: &Holding) {
        if held.terms.campaign.is_some() {
            self.election_changed(&held.lease.resource);
        }
    }

    /// An election or lock changed through this daemon: its observers look.
    pub(super) fn election_changed(&self, name: &str) {
        self.followed.changed(Some(name));
    }

    /// Who leads election lock `name`, as a majority of masters agree.
    ///
    /// # Errors
    /// `Unavailable` when fewer than a majority answered.
    pub(crate) async fn leader(&self, name: &str) -> Result<Option<Leader>, Error> {
        Ok(self.engine.leader(name).await?.map(|term| term.leader))
    }

    /// Sets the value of the leader of `term` (from outside its stream).
    ///
    /// # Errors
    /// `NotLeading`, naming the current term, when `term` does not
    /// lead; `Unavailable` without a majority.
    pub(crate) async fn proclaim(&self, name: &str, term: u64, value: &[u8]) -> Result<(), Error> {
        let current = self.current_term(name, term).await?;
        let record = (term, current.leader.candidate.as_str(), value);
        let ttl = self.followed.max_ttl;
        if !self.engine.write_record(name, &current.value, record, ttl).await? {
            return Err(not_leading(term, None));
        }
        self.followed.changed(Some(name));
        Ok(())
    }

    /// Ends the leadership of `term` (from outside its stream): its lock is
    /// released, and a session holding it here says RESIGNED at once.
    ///
    /// # Errors
    /// `NotLeading`, naming the current term, when `term` does not
    /// lead; `Unavailable` without a majority.
    pub(crate) async fn resign(&self, name: &str, term: u64, who: &Who) -> Result<(), Error> {
        let current = self.current_term(name, term).await?;
        let _ = self.revoked.send((name.to_owned(), Revoked::Resigned(term)));
        self.release(name, &current.value, who).await?;
        audit("resigned", who, Some(&current.leader.candidate), name, Some(term));
        self.metrics.leadership(Leadership::Resigned);
        self.followed.changed(Some(name));
        Ok(())
    }

    /// The candidates this daemon queues for election lock `name`, in order.
    pub(crate) fn participants(&self, name: &str) -> Vec<String> {
        self.waiters.owners(name)
    }

    async fn current_term(&self, name: &str, term: u64) -> Result<crate::redlock::election::Term, Error> {
        match self.engine.leader(name).await? {
            Some(current) if current.leader.term == term => Ok(current),
            Some(current) => Err(not_leading(term, Some(current.leader.term))),
            None => Err(not_leading(term, None)),
        }
    }
}

fn not_leading(term: u64, current: Option<u64>) -> Error {
    Error::NotLeading { term, current }
}

#[cfg(test)]
#[path = "campaign_tests.rs"]
mod tests;
