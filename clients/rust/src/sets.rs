//! The leases of one set (`Client::acquire_many`) together: `extend_many`
//! and `release_many`, one call for several locks that hold one value.

use std::time::Duration;

use tokio::time::Instant;

use crate::client::Client;
use crate::error::Error;
use crate::lease::Lease;
use crate::proto::{ExtendManyRequest, ReleaseManyRequest};
use crate::wire;

/// The most leases one call takes (as the daemon's `MAX_SET`).
const MAX_SET: usize = 16;

/// Checks a set's leases (1 to 16, of one value) as the daemon would.
fn check_set(count: usize, values: impl Iterator<Item = Option<String>>) -> Result<(), Error> {
    if !(1..=MAX_SET).contains(&count) {
        return Err(Error::InvalidArgument(format!(
            "invalid leases: {count} leases; 1 to {MAX_SET} are allowed"
        )));
    }
    let mut held = values.flatten();
    if let Some(first) = held.next()
        && held.any(|value| value != first)
    {
        return Err(Error::InvalidArgument(
            "invalid leases: they hold more than one value: a call takes leases of one acquire_many".into(),
        ));
    }
    Ok(())
}

impl Client {
    /// Extends leases of one set (what `acquire_many` gave, or some of
    /// them) in one call to `ttl` (`None`: the daemon's default TTL),
    /// counted from the moment it is sent. `true` when every one was
    /// extended; `false` when any was lost (expired, taken over): stop
    /// working under the set. Each extended lease's
    /// `valid_until` moves.
    ///
    /// # Errors
    /// `InvalidArgument` for no lease, over 16, or leases of more than one
    /// set (before sending), or a `ttl` out of the daemon's range; the
    /// daemon's other statuses.
    pub async fn extend_many<'a>(
        &self,
        leases: impl IntoIterator<Item = &'a mut Lease>,
        ttl: Option<Duration>,
    ) -> Result<bool, Error> {
        let mut leases: Vec<&mut Lease> = leases.into_iter().collect();
        check_set(leases.len(), leases.iter().map(|l| l.value().map(str::to_owned)))?;
        // A lease given back is consumed, so each holds its value.
        let Some(value) = leases.iter().find_map(|l| l.value()).map(str::to_owned) else {
            return Ok(false);
        };
        let sent = Instant::now();
        let request = ExtendManyRequest {
            resources: leases.iter().map(|l| l.resource().to_owned()).collect(),
            value,
            ttl: ttl.map(wire::duration),
        };
        let reply = self.stub.clone().extend_many(request).await?.into_inner();
        let until = sent + wire::from_wire(reply.validity);
        for (lease, extended) in leases.iter_mut().zip(&reply.members) {
            if *extended {
                lease.extended(until);
            }
        }
        Ok(reply.extended)
    }

    /// Gives back leases of one set (what `acquire_many` gave, or some of
    /// them) in one call. `true` when every one was still held to the end:
    /// the work under the set stayed protected.
    ///
    /// # Errors
    /// `InvalidArgument` for no lease, over 16, or leases of more than one
    /// set (before sending; nothing is released then); the daemon's other
    /// statuses (the leases are not released then: the daemon lets them
    /// expire).
    pub async fn release_many(&self, leases: impl IntoIterator<Item = Lease>) -> Result<bool, Error> {
        let mut leases: Vec<Lease> = leases.into_iter().collect();
        check_set(leases.len(), leases.iter().map(|l| l.value().map(str::to_owned)))?;
        let resources = leases.iter().map(|l| l.resource().to_owned()).collect();
        let Some(value) = leases.iter_mut().find_map(Lease::take_value) else {
            return Ok(false);
        };
        leases.iter_mut().for_each(|l| drop(l.take_value()));
        let request = ReleaseManyRequest { resources, value };
        Ok(self.stub.clone().release_many(request).await?.into_inner().released)
    }
}
