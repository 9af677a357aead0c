//! A `Hold` session: the daemon holds the lock and extends it for as long
//! as the session lives, and says at once when it is lost. The session
//! also keeps its own deadline — the last validity, counted from when its
//! message arrived, on Tokio's monotonic clock — and says the lock is lost
//! [`LOST_MARGIN`] before it even if no word ever comes (a frozen daemon, a
//! stuck network: docs/design.md#sessions). Dropping the session releases
//! the lock (the stream half-closes).

use std::fmt;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

use crate::client::Client;
use crate::error::Error;
use crate::proto::{HoldEvent, HoldRelease, HoldRequest, HoldResponse, HoldStart, hold_request};
use crate::wire;

/// How long before the last validity runs out a session whose daemon fell
/// silent is said lost, by the client's own timer: 100
/// ms, or a quarter of the validity when that is less. It covers a
/// message's way from the daemon and a late timer on a busy host, so that
/// the holder is told before the validity ends; it is below the daemon's
/// own lead (LOST at 3 x node_timeout, 150 ms by default, before the end:
/// docs/design.md#sessions), so the daemon's LOST, which says why, normally
/// comes first.
pub const LOST_MARGIN: Duration = Duration::from_millis(100);

/// What the client's own deadline says when it passes.
const SILENT: &str = "no extension came from the daemon before valid_until (the client's own deadline)";

/// When the client's own timer says a validity of `validity`, from
/// `received`, is lost: [`LOST_MARGIN`] (at most a quarter of `validity`)
/// before it runs out.
pub(crate) fn lost_at(received: Instant, validity: Duration) -> Instant {
    received + validity - LOST_MARGIN.min(validity / 4)
}

/// How `hold` takes a lock.
#[derive(Debug, Clone, Default)]
pub struct HoldOptions {
    pub(crate) ttl: Option<Duration>,
    pub(crate) wait: Duration,
    pub(crate) owner: String,
    pub(crate) max_hold: Option<Duration>,
    pub(crate) shared: bool,
    pub(crate) permits: u32,
    pub(crate) reentrancy_key: String,
    pub(crate) lock_delay: Option<Duration>,
}

impl HoldOptions {
    /// One attempt, the daemon's default TTL and `max_hold`.
    pub fn new() -> HoldOptions {
        HoldOptions::default()
    }

    /// How long the daemon keeps the lock after the session ends without a
    /// release (this process died, the stream broke, LOST) before the next
    /// holder may have it: for resources that cannot check fencing tokens.
    /// A release (dropping the lock) frees it at once.
    #[must_use]
    pub fn lock_delay(mut self, lock_delay: Duration) -> HoldOptions {
        self.lock_delay = Some(lock_delay);
        self
    }

    /// What each extension renews (at least 8 × the daemon's node timeout).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> HoldOptions {
        self.ttl = Some(ttl);
        self
    }

    /// How long to wait for the lock.
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> HoldOptions {
        self.wait = wait;
        self
    }

    /// A label for logs and `Inspect`.
    #[must_use]
    pub fn owner(mut self, owner: impl Into<String>) -> HoldOptions {
        self.owner = owner.into();
        self
    }

    /// Held shared with other shared holders (a reader), not exclusively.
    #[must_use]
    pub fn shared(mut self) -> HoldOptions {
        self.shared = true;
        self
    }

    /// One of `n` permits of a semaphore, as in `AcquireOptions::permits`.
    #[must_use]
    pub fn permits(mut self, n: u32) -> HoldOptions {
        self.permits = n;
        self
    }

    /// As `AcquireOptions::reentrancy_key`; the session is one hold.
    #[must_use]
    pub fn reentrancy_key(mut self, key: impl Into<String>) -> HoldOptions {
        self.reentrancy_key = key.into();
        self
    }

    /// The longest the daemon keeps the lock, from when it was granted.
    #[must_use]
    pub fn max_hold(mut self, max_hold: Duration) -> HoldOptions {
        self.max_hold = Some(max_hold);
        self
    }
}

/// Where a session stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Held until the given instant at least.
    Held(Instant),
    /// Lost, with the daemon's reason.
    Lost(String),
    /// Released by the daemon; whether it was held to the end, and why.
    Released(bool, String),
}

/// A lock held by a `Hold` session.
pub struct HeldLock {
    resource: String,
    fencing_token: u64,
    slot: u32,
    state: watch::Receiver<State>,
    /// Dropping it half-closes the stream: the daemon releases at once.
    requests: Option<mpsc::Sender<HoldRequest>>,
}

/// Opens a session and waits for the lock (at most `wait`).
pub(crate) async fn open(
    client: &Client,
    resource: &str,
    options: &HoldOptions,
    wait: Duration,
) -> Result<HeldLock, Error> {
    let (requests, outgoing) = mpsc::channel(2);
    let start = HoldStart {
        resource: resource.to_owned(),
        ttl: options.ttl.map(wire::duration),
        wait: (!wait.is_zero()).then(|| wire::duration(wait)),
        owner: options.owner.clone(),
        max_hold: options.max_hold.map(wire::duration),
        mode: wire::mode(options.shared).into(),
        permits: options.permits,
        reentrancy_key: options.reentrancy_key.clone(),
        lock_delay: options.lock_delay.map(wire::duration),
    };
    let first = HoldRequest {
        request: Some(hold_request::Request::Start(start)),
    };
    requests
        .send(first)
        .await
        .map_err(|_| Error::Transport("the session closed before it started".into()))?;
    let mut events = client
        .stub
        .clone()
        .hold(ReceiverStream::new(outgoing))
        .await?
        .into_inner();
    let reply = events
        .message()
        .await?
        .ok_or_else(|| Error::Transport("the daemon ended the session before answering".into()))?;
    let received = Instant::now();
    match HoldEvent::try_from(reply.event) {
        Ok(HoldEvent::Acquired) => {}
        Ok(HoldEvent::NotAcquired) => return Err(Error::NotAcquired(reply.reason)),
        Ok(HoldEvent::Lost) => return Err(Error::LockLost(reply.reason)),
        _ => {
            return Err(Error::Other(
                tonic::Code::Internal,
                format!("unexpected first event {reply:?}"),
            ));
        }
    }
    let lease = reply.lease.unwrap_or_default();
    let validity = wire::from_wire(lease.validity);
    let (state_tx, state) = watch::channel(State::Held(received + validity));
    tokio::spawn(follow(events, state_tx, lost_at(received, validity)));
    Ok(HeldLock {
        resource: lease.resource,
        fencing_token: lease.fencing_token,
        slot: lease.slot,
        state,
        requests: Some(requests),
    })
}

/// Follows the daemon's events, and the client's own deadline (`lost_at`),
/// until the session ends. At the deadline it stops following; the daemon
/// lets go when the `HeldLock` is released or dropped (the stream closes).
async fn follow(mut events: Streaming<HoldResponse>, state: watch::Sender<State>, mut lost_at: Instant) {
    loop {
        let next = tokio::select! {
            message = events.message() => match message {
                Ok(Some(reply)) => match HoldEvent::try_from(reply.event) {
                    // The validity counts from when the event is received.
                    Ok(HoldEvent::Extended) => {
                        let received = Instant::now();
                        let validity = wire::from_wire(reply.lease.and_then(|l| l.validity));
                        lost_at = self::lost_at(received, validity);
                        State::Held(received + validity)
                    }
                    Ok(HoldEvent::Released) => State::Released(reply.held_to_end, reply.reason),
                    Ok(HoldEvent::Lost) => State::Lost(reply.reason),
                    _ => continue,
                },
                Ok(None) => State::Lost("the daemon ended the session".into()),
                Err(status) => State::Lost(format!("the session failed: {}", status.message())),
            },
            () = tokio::time::sleep_until(lost_at) => State::Lost(SILENT.into()),
        };
        let ended = !matches!(next, State::Held(_));
        // A loss is never overwritten by what follows it.
        state.send_if_modified(|now| {
            if matches!(now, State::Lost(_)) {
                return false;
            }
            *now = next;
            true
        });
        if ended {
            return;
        }
    }
}

impl HeldLock {
    /// The locked resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The session's fencing token (it never changes within a session).
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// For a permit of a semaphore, the slot it holds (0 to permits - 1);
    /// its fencing token is the slot's.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Until when the lock is guaranteed (moves on with every extension);
    /// `None` once it is lost or released.
    pub fn valid_until(&self) -> Option<Instant> {
        match &*self.state.borrow() {
            State::Held(until) => Some(*until),
            _ => None,
        }
    }

    /// Whether the lock was lost, or released by the daemon without this
    /// client asking (a force release, `max_hold` used up, a shutdown).
    pub fn is_lost(&self) -> bool {
        ended_by_the_daemon(&self.state.borrow()).is_some()
    }

    /// Resolves with the daemon's reason when the lock is lost (or the
    /// client's own, [`LOST_MARGIN`] before the last validity runs out
    /// with no extension from the daemon), or when the
    /// daemon released it without this client asking (a force release,
    /// `max_hold` used up, a shutdown: HOLD_EVENT_RELEASED): stop working
    /// under it at once. (`release` takes the lock by value, so a release
    /// seen here is never one this client asked for.)
    pub async fn lost(&self) -> String {
        let mut state = self.state.clone();
        loop {
            if let Some(reason) = ended_by_the_daemon(&state.borrow_and_update()) {
                return reason;
            }
            if state.changed().await.is_err() {
                // The session's task ended without a word: gone all the same.
                return ended_by_the_daemon(&state.borrow())
                    .unwrap_or_else(|| "the session ended without an answer".into());
            }
        }
    }

    /// Gives the lock back and waits for the daemon's word: `true` when it
    /// was held to the end.
    ///
    /// # Errors
    /// `LockLost` when the lock was lost before it was released (even if
    /// the work seemed to succeed, it was not protected to the end).
    pub async fn release(mut self) -> Result<bool, Error> {
        if let Some(requests) = self.requests.take() {
            let release = HoldRequest {
                request: Some(hold_request::Request::Release(HoldRelease {})),
            };
            let _ = requests.send(release).await;
        }
        let mut state = self.state.clone();
        loop {
            match &*state.borrow_and_update() {
                State::Released(held, _) => return Ok(*held),
                State::Lost(reason) => return Err(Error::LockLost(reason.clone())),
                State::Held(_) => {}
            }
            if state.changed().await.is_err() {
                let ended = state.borrow().clone();
                return match ended {
                    State::Released(held, _) => Ok(held),
                    State::Lost(reason) => Err(Error::LockLost(reason)),
                    State::Held(_) => Err(Error::Transport("the session ended without an answer".into())),
                };
            }
        }
    }
}

/// Why the session is over, when it is: lost, or released by the daemon.
fn ended_by_the_daemon(state: &State) -> Option<String> {
    match state {
        State::Held(_) => None,
        State::Lost(reason) => Some(reason.clone()),
        State::Released(_, reason) if reason.is_empty() => Some("released by the daemon".into()),
        State::Released(_, reason) => Some(format!("released by the daemon: {reason}")),
    }
}

impl fmt::Debug for HeldLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldLock")
            .field("resource", &self.resource)
            .field("fencing_token", &self.fencing_token)
            .field("state", &*self.state.borrow())
            .finish()
    }
}
