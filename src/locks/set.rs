//! Several resources at once through the daemon
//! (docs/design.md#sets): quotas, metrics and audit as
//! for one lock; the acquisition runs in a task of its own, so a caller that
//! leaves never leaks a set.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::locks::Locks;
use crate::locks::error::Error;
use crate::locks::quota::Kind as Quota;
use crate::locks::who::{Who, audit};
use crate::redlock::{AcquiredSet, Node};
use crate::telemetry::labels::{Failure, LockKind, Status};

impl<N: Node> Locks<N> {
    /// The resources of the set granted through this daemon that holds
    /// lock `name` (empty when none does).
    pub(crate) fn set_of(&self, name: &str) -> Vec<String> {
        let members = self.held.set_of(name);
        members
            .iter()
            .map(|member| crate::locks::who::resource_of(member).to_owned())
            .collect()
    }

    /// Takes every one of `names` (sorted, without repeats) or none,
    /// waiting up to `wait` (whole-set attempts in Redis; sets do not
    /// queue in the daemon). A set granted after the caller left is
    /// released at once. A set counts as one lock for quotas.
    ///
    /// # Errors
    /// As `Locks::acquire`.
    pub(crate) async fn acquire_set(
        self: &Arc<Self>,
        names: Vec<String>,
        (ttl, wait): (Duration, Duration),
        give_up: impl Future<Output = ()> + Send + 'static,
        who: &Who,
    ) -> Result<AcquiredSet, Error> {
        let started = Instant::now();
        let outcome = match self.check_quota(who) {
            Ok(()) => self.acquire_set_unrecorded(names, (ttl, wait), give_up, who).await,
            Err(e) => Err(e),
        };
        if let Ok(AcquiredSet::Granted(leases)) = &outcome {
            let unit = who.quota.as_ref().map(|q| q.count_one(Quota::LocksHeld));
            self.held.granted_set(leases, &who.owner, unit);
            for lease in leases {
                audit("grant", who, None, &lease.resource, Some(lease.fencing_token));
            }
        }
        let (status, failure) = match &outcome {
            Ok(AcquiredSet::Granted(_)) => (Status::Success, None),
            Ok(AcquiredSet::NotGranted { .. }) if wait.is_zero() => (Status::Fail, Some(Failure::Taken)),
            Ok(AcquiredSet::NotGranted { .. }) => (Status::Fail, Some(Failure::WaitTimedOut)),
            Err(error) => (Status::Error, Some(super::failure_of(error))),
        };
        self.metrics.acquired(LockKind::Set, status, failure, started.elapsed());
        outcome
    }

    async fn acquire_set_unrecorded(
        self: &Arc<Self>,
        names: Vec<String>,
        (ttl, wait): (Duration, Duration),
        give_up: impl Future<Output = ()> + Send + 'static,
        who: &Who,
    ) -> Result<AcquiredSet, Error> {
        let holder = self.engine.holder_tag(&who.tenant, &who.owner);
        let (mut tx, rx) = oneshot::channel();
        let locks = self.clone();
        let who = who.clone();
        tokio::spawn(async move {
            let stop = async {
                tokio::select! {
                    () = tx.closed() => {}
                    () = give_up => {}
                }
            };
            let outcome = (locks.engine.acquire_set(&names, ttl, wait, stop, &holder).await).map_err(Error::from);
            if let Err(Ok(AcquiredSet::Granted(leases))) = tx.send(outcome) {
                tracing::info!(
                    members = leases.len(),
                    "the caller left before its set was granted; releasing it"
                );
                for lease in leases {
                    let _ = locks.release(&lease.resource, &lease.value, &who).await;
                }
            }
        });
        rx.await
            .map_err(|_| Error::Internal("the acquire task failed".into()))?
    }
}
