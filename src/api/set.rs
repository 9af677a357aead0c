//! `AcquireMany`, `ExtendMany` and `ReleaseMany` of the `redlockd.v1.Lock`
//! service (docs/design.md#sets): validation and
//! translation; the set logic is in `locks` and `redlock`.

use std::time::Duration;

use futures::future::join_all;

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::proto::{
    AcquireManyRequest, AcquireManyResponse, ExtendManyRequest, ExtendManyResponse, ReleaseManyRequest,
    ReleaseManyResponse,
};
use crate::api::request;
use crate::api::service::LockService;
use crate::api::wire::{wire_duration, wire_lease, wire_outcomes, wire_reason};
use crate::locks;
use crate::redlock::{AcquiredSet, Node};

impl<N: Node> LockService<N> {
    pub(crate) async fn acquire_set(
        &self,
        caller: &Caller,
        req: AcquireManyRequest,
    ) -> Result<AcquireManyResponse, Error> {
        request::resources(&req.resources)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let wait = self.limits.wait(req.wait)?;
        request::owner(&req.owner)?;
        if self.locks.is_closing() {
            return Err(locks::error::Error::ShuttingDown.into());
        }
        // Sorted and without repeats: every caller takes the members in one
        // order (docs/design.md#sets).
        let mut members: Vec<(String, String)> = (req.resources.iter())
            .map(|resource| Ok((caller.lock_name(resource)?, resource.clone())))
            .collect::<Result<_, Error>>()?;
        members.sort();
        members.dedup();
        let names = members.iter().map(|(name, _)| name.clone()).collect();
        let who = caller.who(&req.owner);
        let outcome = (self.locks)
            .acquire_set(names, (ttl, wait), std::future::pending(), &who)
            .await?;
        Ok(match outcome {
            AcquiredSet::Granted(leases) => AcquireManyResponse {
                acquired: true,
                leases: (members.iter().zip(&leases))
                    .map(|((_, resource), lease)| wire_lease(resource, lease, lease.validity))
                    .collect(),
                ..AcquireManyResponse::default()
            },
            AcquiredSet::NotGranted {
                reason,
                attempts,
                votes,
            } => AcquireManyResponse {
                acquired: false,
                leases: Vec::new(),
                reason: wire_reason(reason).into(),
                attempts,
                nodes: wire_outcomes(&votes),
            },
        })
    }

    pub(crate) async fn extend_set(
        &self,
        caller: &Caller,
        req: ExtendManyRequest,
    ) -> Result<ExtendManyResponse, Error> {
        request::resources(&req.resources)?;
        let value = request::value(&req.value)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let names = names(caller, &req.resources)?;
        let who = caller.who("");
        let each = names.iter().map(|name| self.locks.extend(name, &value, ttl, &who));
        let validities: Vec<Option<Duration>> = join_all(each).await.into_iter().collect::<Result<_, _>>()?;
        Ok(ExtendManyResponse {
            extended: validities.iter().all(Option::is_some),
            members: validities.iter().map(Option::is_some).collect(),
            validity: validities.iter().flatten().min().copied().map(wire_duration),
        })
    }

    pub(crate) async fn release_set(
        &self,
        caller: &Caller,
        req: ReleaseManyRequest,
    ) -> Result<ReleaseManyResponse, Error> {
        request::resources(&req.resources)?;
        let value = request::value(&req.value)?;
        let names = names(caller, &req.resources)?;
        let who = caller.who("");
        let each = names.iter().map(|name| self.locks.release(name, &value, &who));
        let held: Vec<bool> = join_all(each).await.into_iter().collect::<Result<_, _>>()?;
        Ok(ReleaseManyResponse {
            released: held.iter().all(|h| *h),
            members: held,
        })
    }
}

/// The lock names of `resources`, in their order.
fn names(caller: &Caller, resources: &[String]) -> Result<Vec<String>, Error> {
    resources.iter().map(|resource| caller.lock_name(resource)).collect()
}
