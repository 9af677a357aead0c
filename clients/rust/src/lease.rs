//! A lock taken with `acquire`: extended and released by hand; released in
//! the background if it is dropped still held.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::client::Client;
use crate::error::Error;
use crate::proto::{self, ExtendRequest, ReleaseRequest};
use crate::wire;

/// A granted lock.
pub struct Lease {
    client: Client,
    resource: String,
    /// The ownership secret; `None` once released.
    value: Option<String>,
    fencing_token: u64,
    shared: bool,
    permits: u32,
    slot: u32,
    valid_until: Instant,
}

impl Lease {
    /// The lease the daemon granted to a request sent at `sent`.
    pub(crate) fn new(client: Client, lease: proto::Lease, sent: Instant) -> Lease {
        Lease {
            client,
            valid_until: sent + wire::from_wire(lease.validity),
            resource: lease.resource,
            value: Some(lease.value),
            fencing_token: lease.fencing_token,
            shared: lease.mode == i32::from(proto::LockMode::Shared),
            permits: lease.permits,
            slot: lease.slot,
        }
    }

    /// The ownership secret while held (`None` once released).
    pub(crate) fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// Moves the validity after an extension the daemon granted.
    pub(crate) fn extended(&mut self, until: Instant) {
        self.valid_until = until;
    }

    /// Takes the ownership secret: the lease is then released, by the
    /// caller (`Client::release_many`), not by its drop.
    pub(crate) fn take_value(&mut self) -> Option<String> {
        self.value.take()
    }

    /// The locked resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Strictly increases per resource: send it with every write and have
    /// the store reject a token lower than one it has seen.
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// Whether it is a shared lock (a reader, `AcquireOptions::shared`).
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// For a permit of a semaphore, the number of permits (0 otherwise).
    pub fn permits(&self) -> u32 {
        self.permits
    }

    /// For a permit of a semaphore, the slot it holds (0 to permits - 1);
    /// its fencing token is the slot's.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Until when the lock is guaranteed, counted from the moment the
    /// request was sent (the client rule).
    pub fn valid_until(&self) -> Instant {
        self.valid_until
    }

    /// Resets the lock's time to live (`None`: the daemon's default TTL).
    /// `false` when the lock is lost: stop working under it.
    ///
    /// # Errors
    /// The daemon's status (`Unavailable` when too few masters answered).
    pub async fn extend(&mut self, ttl: Option<Duration>) -> Result<bool, Error> {
        let Some(value) = &self.value else {
            return Ok(false);
        };
        let sent = Instant::now();
        let request = ExtendRequest {
            resource: self.resource.clone(),
            value: value.clone(),
            ttl: ttl.map(wire::duration),
        };
        let reply = self.client.stub.clone().extend(request).await?.into_inner();
        if reply.extended {
            self.valid_until = sent + wire::from_wire(reply.validity);
        }
        Ok(reply.extended)
    }

    /// Gives the lock back. `true` when it was still held to the end: the
    /// critical section stayed protected.
    ///
    /// # Errors
    /// The daemon's status.
    pub async fn release(mut self) -> Result<bool, Error> {
        let Some(value) = self.value.take() else {
            return Ok(false);
        };
        let request = ReleaseRequest {
            resource: self.resource.clone(),
            value,
        };
        Ok(self.client.stub.clone().release(request).await?.into_inner().released)
    }
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the value: it proves ownership.
        f.debug_struct("Lease")
            .field("resource", &self.resource)
            .field("fencing_token", &self.fencing_token)
            .field("valid_until", &self.valid_until)
            .finish_non_exhaustive()
    }
}

impl Drop for Lease {
    /// A lease dropped still held (an early return, a panic) is released at
    /// once rather than a TTL later.
    fn drop(&mut self) {
        let Some(value) = self.value.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut stub = self.client.stub.clone();
        let request = ReleaseRequest {
            resource: std::mem::take(&mut self.resource),
            value,
        };
        runtime.spawn(async move { stub.release(request).await });
    }
}
