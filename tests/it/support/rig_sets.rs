//! Rig clients that take two resources as a set (docs/design.md#sets): each member's
//! grant and release is recorded as a lock of its own, so every rule of the checker holds per member; the
//! first member's token goes to the fenced store, as a single lock's would.

use std::time::Duration;

use redlockd_client::proto::{AcquireManyRequest, Lease};
use tokio::time::Instant;

use super::history::{Grant, Kind, Reply};
use super::rig::{Client, Held, WAIT};
use super::secs;

impl Client {
    /// One whole-set acquire of `resource` and `other`, write, hold, release of both.
    pub(super) async fn set_cycle(&mut self, resource: &str, other: &str, hold: Duration) {
        let members = [resource.to_owned(), other.to_owned()];
        let ops: Vec<_> = (members.iter())
            .map(|m| self.history.invoke(&self.name, m, Kind::Acquire))
            .collect();
        let sent = Instant::now();
        let mut request = tonic::Request::new(AcquireManyRequest {
            resources: members.to_vec(),
            ttl: secs(super::rig::TTL.as_secs_f64()),
            wait: secs(WAIT.as_secs_f64()),
            owner: String::new(),
        });
        request.set_timeout(WAIT + Duration::from_secs(2));
        let reply = match self.rpc.acquire_many(request).await {
            Ok(reply) => reply.into_inner(),
            Err(_) => {
                ops.into_iter().for_each(|op| self.history.complete(op, Reply::Unknown));
                tokio::time::sleep(Duration::from_millis(50)).await;
                return;
            }
        };
        let leases: Vec<Lease> = if reply.acquired { reply.leases } else { Vec::new() };
        for (op, member) in ops.into_iter().zip(&members) {
            let reply = match leases.iter().find(|l| &l.resource == member) {
                Some(lease) => Reply::Granted(Grant {
                    token: lease.fencing_token,
                    validity: lease.validity.and_then(|v| v.try_into().ok()).unwrap_or_default(),
                    value: lease.value.clone(),
                    ..Grant::default()
                }),
                None => Reply::Fail,
            };
            self.history.complete(op, reply);
        }
        let held: Vec<Held> = (leases.iter())
            .map(|lease| Held {
                token: lease.fencing_token,
                value: lease.value.clone(),
                sent,
                validity: lease.validity.and_then(|v| v.try_into().ok()).unwrap_or_default(),
            })
            .collect();
        if let Some(first) = held
            .iter()
            .zip(&leases)
            .find(|(_, l)| l.resource == resource)
            .map(|(h, _)| h)
        {
            self.write_fenced(first, &format!("{}:{}", self.name, first.token));
        }
        if held.is_empty() {
            return;
        }
        tokio::time::sleep(hold).await;
        for (member, held) in leases.iter().map(|l| l.resource.clone()).zip(&held) {
            self.release(&member, held).await;
        }
    }
}
