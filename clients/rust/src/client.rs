//! The client: connect once, then take locks with `acquire` (by hand) or
//! `hold` (a session the daemon keeps alive). Elections are in
//! `election.rs`.

use std::time::Duration;

use tokio::time::Instant;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;

use crate::connect::{self, AdminStub, Bearer, DEFAULT_ADDR, ElectionStub, Options, Stub};
use crate::error::Error;
use crate::hold::{self, HeldLock, HoldOptions};
use crate::lease::Lease;
use crate::pipeline::Pipeline;
use crate::proto::lock_client::LockClient;
use crate::proto::{AcquireManyRequest, AcquireRequest, InspectRequest, InspectResponse, WatchRequest};
use crate::views::WatchStream;
use crate::wire;

/// The longest resource name and owner label, in bytes (as the daemon).
pub(crate) const MAX_RESOURCE_BYTES: usize = 256;
const MAX_OWNER_BYTES: usize = 256;
/// A wait cut short by UNAVAILABLE is retried after a pause uniform in this
/// range (never past the caller's wait).
const RETRY_PAUSE_MS: std::ops::RangeInclusive<u64> = 50..=250;

/// A connection to one daemon. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct Client {
    pub(crate) stub: Stub,
    /// The plain channel and the token, for `Pipeline` streams.
    channel: Channel,
    bearer: Bearer,
}

/// How `acquire` takes a lock.
#[derive(Debug, Clone, Default)]
pub struct AcquireOptions {
    pub(crate) ttl: Option<Duration>,
    pub(crate) wait: Duration,
    pub(crate) owner: String,
    pub(crate) shared: bool,
    pub(crate) permits: u32,
    pub(crate) reentrancy_key: String,
    pub(crate) lock_delay: Option<Duration>,
}

impl AcquireOptions {
    /// One attempt, the daemon's default TTL, no owner label.
    pub fn new() -> AcquireOptions {
        AcquireOptions::default()
    }

    /// How long the lock lives unless extended (within the daemon's
    /// `[min_ttl, max_ttl]`; unset = its `default_ttl`).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> AcquireOptions {
        self.ttl = Some(ttl);
        self
    }

    /// Keeps the lock on the masters this much longer than its validity
    /// (at most the daemon's `lock.max_lock_delay`), so a holder that dies
    /// without releasing leaves the resource to nobody for that long; a
    /// release frees it at once, and extensions keep the delay.
    #[must_use]
    pub fn lock_delay(mut self, lock_delay: Duration) -> AcquireOptions {
        self.lock_delay = Some(lock_delay);
        self
    }

    /// How long to keep trying while someone else holds the lock.
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> AcquireOptions {
        self.wait = wait;
        self
    }

    /// A label for logs and `Inspect` (a pod name, a job id).
    #[must_use]
    pub fn owner(mut self, owner: impl Into<String>) -> AcquireOptions {
        self.owner = owner.into();
        self
    }

    /// Held shared with other shared holders (a reader of a read-write
    /// lock), not exclusively: see `LockMode` in the proto.
    #[must_use]
    pub fn shared(mut self) -> AcquireOptions {
        self.shared = true;
        self
    }

    /// One of `n` permits of a semaphore (2 to the daemon's
    /// `lock.max_permits`); every holder must ask for the same `n`.
    #[must_use]
    pub fn permits(mut self, n: u32) -> AcquireOptions {
        self.permits = n;
        self
    }

    /// Takes the lock again at once, with the same value and token, while
    /// the daemon holds it for another acquisition with this key (a job or
    /// trace id, at most 128 bytes); each release counts one down. Anyone
    /// who knows the key shares the lock.
    #[must_use]
    pub fn reentrancy_key(mut self, key: impl Into<String>) -> AcquireOptions {
        self.reentrancy_key = key.into();
        self
    }
}

impl Client {
    /// Connects to the daemon at `addr` (`host:port`, or an `http://` or
    /// `https://` URL).
    ///
    /// # Errors
    /// `Transport` when it cannot be reached; `InvalidArgument` for a bad
    /// address or token.
    pub async fn connect(addr: &str, options: Options) -> Result<Client, Error> {
        let (stub, channel, bearer) = connect::connect(addr, &options).await?;
        Ok(Client { stub, channel, bearer })
    }

    /// Connects as the environment says: `REDLOCKD_ADDR` (default
    /// `127.0.0.1:7420`), `REDLOCKD_TOKEN`, `REDLOCKD_CA`, `REDLOCKD_CERT`
    /// and `REDLOCKD_KEY`.
    ///
    /// # Errors
    /// As [`Client::connect`], or a file that cannot be read.
    pub async fn from_env() -> Result<Client, Error> {
        let addr = std::env::var("REDLOCKD_ADDR").unwrap_or_else(|_| DEFAULT_ADDR.to_owned());
        Client::connect(&addr, Options::from_env()?).await
    }

    /// Takes the lock on `resource`, trying for up to `options.wait`.
    /// `None` when someone else kept it all along. A wait the daemon cuts
    /// short with UNAVAILABLE (too few masters) is retried, with jitter,
    /// until the wait runs out.
    ///
    /// # Errors
    /// `InvalidArgument` (checked before sending when possible),
    /// `Unavailable` with what each master said, and the other statuses.
    pub async fn acquire(&self, resource: &str, options: AcquireOptions) -> Result<Option<Lease>, Error> {
        check_resource(resource)?;
        check_owner(&options.owner)?;
        let deadline = Instant::now() + options.wait;
        loop {
            let sent = Instant::now();
            let left = deadline.saturating_duration_since(sent);
            let request = AcquireRequest {
                resource: resource.to_owned(),
                ttl: options.ttl.map(wire::duration),
                wait: (!left.is_zero()).then(|| wire::duration(left)),
                owner: options.owner.clone(),
                mode: wire::mode(options.shared).into(),
                permits: options.permits,
                reentrancy_key: options.reentrancy_key.clone(),
                lock_delay: options.lock_delay.map(wire::duration),
            };
            match self.stub.clone().acquire(request).await {
                Ok(reply) => {
                    let reply = reply.into_inner();
                    let granted = reply.lease.filter(|_| reply.acquired);
                    return Ok(granted.map(|lease| Lease::new(self.clone(), lease, sent)));
                }
                Err(status) => {
                    let error = Error::from(status);
                    if !retry_after_unavailable(&error, deadline).await {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// Takes every one of `resources` (1 to 16) or none, trying for up to
    /// `options.wait` (whole-set attempts): one value, a lease per member
    /// (sorted by resource, without repeats), each with its own token and
    /// extended or released on its own. `None` when the set was not free
    /// all along. `shared`, `permits` and `reentrancy_key` do not apply.
    ///
    /// # Errors
    /// As [`Client::acquire`].
    pub async fn acquire_many(&self, resources: &[&str], options: AcquireOptions) -> Result<Option<Vec<Lease>>, Error> {
        // The daemon's words: the field is the list, and the member its index.
        for (i, resource) in resources.iter().enumerate() {
            if let Err(Error::InvalidArgument(why)) = check_resource(resource) {
                let why = why.replacen("invalid resource:", &format!("invalid resources: [{i}]"), 1);
                return Err(Error::InvalidArgument(why));
            }
        }
        check_owner(&options.owner)?;
        let sent = Instant::now();
        let request = AcquireManyRequest {
            resources: resources.iter().map(|r| (*r).to_owned()).collect(),
            ttl: options.ttl.map(wire::duration),
            wait: (!options.wait.is_zero()).then(|| wire::duration(options.wait)),
            owner: options.owner.clone(),
        };
        let reply = self.stub.clone().acquire_many(request).await?.into_inner();
        Ok(reply.acquired.then(|| {
            (reply.leases.into_iter())
                .map(|lease| Lease::new(self.clone(), lease, sent))
                .collect()
        }))
    }

    /// Opens a `Hold` session on `resource`: resolves once the lock is
    /// held; the daemon then extends it for as long as the session lives.
    ///
    /// # Errors
    /// `NotAcquired` when the wait ran out; the others as for `acquire`.
    pub async fn hold(&self, resource: &str, options: HoldOptions) -> Result<HeldLock, Error> {
        check_resource(resource)?;
        check_owner(&options.owner)?;
        let deadline = Instant::now() + options.wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match hold::open(self, resource, &options, left).await {
                Err(error) if retry_after_unavailable(&error, deadline).await => {}
                other => return other,
            }
        }
    }

    /// The generated stub on this connection (the bearer token included),
    /// for calls this crate does not wrap.
    pub fn stub(&self) -> Stub {
        self.stub.clone()
    }

    /// The admin service (`ListLocks`, `ForceRelease`) on this connection,
    /// with the token: the tenant needs the `admin` scope.
    pub fn admin(&self) -> AdminStub {
        crate::proto::admin_client::AdminClient::with_interceptor(self.channel.clone(), self.bearer.clone())
    }

    /// The election service (`redlockd.v1.Election`) on this connection,
    /// with the token, for calls this crate does not wrap.
    pub fn elections(&self) -> ElectionStub {
        crate::proto::election_client::ElectionClient::with_interceptor(self.channel.clone(), self.bearer.clone())
    }

    /// Opens a `Pipeline` stream on this connection (with the token): many
    /// Acquire, Extend and Release calls over one stream.
    ///
    /// # Errors
    /// The daemon's status when it refuses the stream.
    pub async fn pipeline(&self) -> Result<Pipeline, Error> {
        let mut metadata = MetadataMap::new();
        self.bearer.add_to(&mut metadata);
        Ok(Pipeline::open_with(LockClient::new(self.channel.clone()), metadata).await?)
    }

    /// What the masters hold for `resource` (never lock values).
    ///
    /// # Errors
    /// The daemon's status.
    pub async fn inspect(&self, resource: &str) -> Result<InspectResponse, Error> {
        check_resource(resource)?;
        let request = InspectRequest {
            resource: resource.to_owned(),
        };
        Ok(self.stub.clone().inspect(request).await?.into_inner())
    }

    /// Follows who holds `resource`: the holder now first, then each change
    /// named. A view, not a lock; the stream ends with an error item if
    /// the daemon goes away: watch again.
    ///
    /// # Errors
    /// The daemon's status when it refuses the stream.
    pub async fn watch(&self, resource: &str) -> Result<WatchStream, Error> {
        check_resource(resource)?;
        let request = WatchRequest {
            resource: resource.to_owned(),
        };
        Ok(WatchStream::new(self.stub.clone().watch(request).await?.into_inner()))
    }
}

/// Whether to try again after `error`: UNAVAILABLE with time left before
/// `deadline`; then it has paused a little first.
async fn retry_after_unavailable(error: &Error, deadline: Instant) -> bool {
    if !matches!(error, Error::Unavailable { .. }) {
        return false;
    }
    let pause = Duration::from_millis(fastrand::u64(RETRY_PAUSE_MS));
    if Instant::now() + pause >= deadline {
        return false;
    }
    tokio::time::sleep(pause).await;
    true
}

/// The daemon's check of a resource name, made before anything is sent.
pub(crate) fn check_resource(resource: &str) -> Result<(), Error> {
    printable("resource", resource, 1, MAX_RESOURCE_BYTES)
}

fn check_owner(owner: &str) -> Result<(), Error> {
    printable("owner", owner, 0, MAX_OWNER_BYTES)
}

/// The daemon's rule for text fields, with its message.
pub(crate) fn printable(field: &str, s: &str, min: usize, max: usize) -> Result<(), Error> {
    if s.len() < min || s.len() > max {
        return Err(Error::InvalidArgument(format!(
            "invalid {field}: is {} bytes long; it must be {min} to {max} bytes of printable UTF-8",
            s.len()
        )));
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(Error::InvalidArgument(format!(
            "invalid {field}: contains the control character {c:?}; only printable UTF-8 is allowed"
        )));
    }
    Ok(())
}
