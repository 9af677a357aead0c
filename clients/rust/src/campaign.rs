//! A candidacy that won: the [`Leadership`] guard. A campaign is a `Hold`
//! session with a value (docs/design.md#elections): the daemon extends the
//! term while the stream lives, and says LOST when it can no longer
//! guarantee it. The guard also keeps its own deadline — the last
//! `valid_for`, counted from when its message arrived, on Tokio's monotonic
//! clock — and stops leading [`LOST_MARGIN`](crate::LOST_MARGIN) before it
//! even if LOST never arrives (a frozen daemon, a stuck network:
//! docs/design.md#sessions).
//! Dropping it resigns (the stream half-closes).

use std::fmt;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

use crate::client::Client;
use crate::error::Error;
use crate::hold::lost_at;
use crate::proto::campaign_request::Request as Ask;
use crate::proto::{CampaignEvent, CampaignProclaim, CampaignRequest, CampaignResign, CampaignResponse, CampaignStart};
use crate::wire;

/// After its own deadline a leadership resigns and reads the daemon's
/// answer for at most this long (the daemon may be frozen), then cancels.
const DRAIN_AFTER_DEADLINE: Duration = Duration::from_secs(30);

/// How `campaign` runs for an election.
#[derive(Debug, Clone, Default)]
pub struct CampaignOptions {
    pub(crate) value: Vec<u8>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) max_hold: Option<Duration>,
    pub(crate) lock_delay: Option<Duration>,
}

impl CampaignOptions {
    /// No value, the daemon's default TTL and `max_hold`, no lock delay.
    pub fn new() -> CampaignOptions {
        CampaignOptions::default()
    }

    /// What the leader publishes once elected (at most 4096 bytes): an
    /// address, say. `Leader`, `Observe` and the other candidates see it.
    #[must_use]
    pub fn value(mut self, value: impl Into<Vec<u8>>) -> CampaignOptions {
        self.value = value.into();
        self
    }

    /// The term's time to live; the daemon extends it at about a third
    /// (at least 8 × its node timeout, at most `lock.max_ttl`).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> CampaignOptions {
        self.ttl = Some(ttl);
        self
    }

    /// The longest one term may last (then the daemon resigns for it).
    #[must_use]
    pub fn max_hold(mut self, max_hold: Duration) -> CampaignOptions {
        self.max_hold = Some(max_hold);
        self
    }

    /// How long the daemon keeps the election's lock after a leadership
    /// ends without a resignation (this process died, the stream broke,
    /// LOST), so that the next leader starts only then: for resources that
    /// cannot check terms. Resigning (dropping the guard) frees it at once.
    #[must_use]
    pub fn lock_delay(mut self, lock_delay: Duration) -> CampaignOptions {
        self.lock_delay = Some(lock_delay);
        self
    }
}

/// Why a leadership ended without `resign()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// The daemon said LOST: the term can no longer be guaranteed.
    Told(String),
    /// The daemon resigned for it: `max_hold` used up, the daemon shutting
    /// down, or a `Resign` by term from elsewhere.
    Resigned(String),
    /// The stream ended or failed without a word.
    Broken(String),
    /// The last `valid_for` was about to run out with no extension: the
    /// client's own deadline, [`LOST_MARGIN`](crate::LOST_MARGIN) before
    /// it, passed (the daemon or the network may be stuck).
    Deadline,
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::Told(reason) => write!(f, "lost: {reason}"),
            Lost::Resigned(reason) => write!(f, "resigned by the daemon: {reason}"),
            Lost::Broken(reason) => write!(f, "the campaign stream broke: {reason}"),
            Lost::Deadline => {
                f.write_str("the term's validity was about to run out with no extension (the client's own deadline)")
            }
        }
    }
}

/// What the guard and its follower share.
#[derive(Debug, Clone)]
struct Shared {
    /// Leading until the instant, or ended.
    status: Result<Instant, Lost>,
    /// The published value.
    value: Vec<u8>,
    /// How many PROCLAIMED were received.
    proclaims: u64,
}

/// The leadership of an election, while it lasts. Send [`Leadership::term`]
/// with every write, and stop at once when [`Leadership::lost`] resolves.
/// Dropping it resigns.
pub struct Leadership {
    election: String,
    candidate: String,
    term: u64,
    state: watch::Receiver<Shared>,
    /// Dropping it half-closes the stream: the daemon resigns at once.
    requests: Option<mpsc::Sender<CampaignRequest>>,
    /// One proclamation at a time, so that each PROCLAIMED is told apart.
    proclaiming: Mutex<()>,
}

/// Campaigns and waits until elected.
pub(crate) async fn open(
    client: &Client,
    election: &str,
    candidate: &str,
    options: CampaignOptions,
) -> Result<Leadership, Error> {
    let (requests, outgoing) = mpsc::channel(4);
    let start = CampaignStart {
        election: election.to_owned(),
        candidate: candidate.to_owned(),
        value: options.value,
        ttl: options.ttl.map(wire::duration),
        max_hold: options.max_hold.map(wire::duration),
        lock_delay: options.lock_delay.map(wire::duration),
    };
    requests
        .send(CampaignRequest {
            request: Some(Ask::Start(start)),
        })
        .await
        .map_err(|_| Error::Transport("the campaign closed before it started".into()))?;
    let mut events = (client.elections().campaign(ReceiverStream::new(outgoing)).await?).into_inner();
    let first = (events.message().await?)
        .ok_or_else(|| Error::Transport("the daemon ended the campaign before answering".into()))?;
    let received = Instant::now();
    match first.event() {
        CampaignEvent::Elected => {}
        CampaignEvent::NotElected | CampaignEvent::Resigned => return Err(Error::NotAcquired(first.reason)),
        CampaignEvent::Lost => return Err(Error::LockLost(first.reason)),
        _ => {
            return Err(Error::Other(
                tonic::Code::Internal,
                format!("unexpected first campaign event {first:?}"),
            ));
        }
    }
    let validity = wire::from_wire(first.valid_for);
    let (state_tx, state) = watch::channel(Shared {
        status: Ok(received + validity),
        value: first.value,
        proclaims: 0,
    });
    tokio::spawn(follow(
        events,
        state_tx,
        requests.downgrade(),
        lost_at(received, validity),
    ));
    Ok(Leadership {
        election: election.to_owned(),
        candidate: candidate.to_owned(),
        term: first.term,
        state,
        requests: Some(requests),
        proclaiming: Mutex::new(()),
    })
}

/// Follows the daemon's events, and the client's own deadline (`lost_at`),
/// until the leadership ends.
async fn follow(
    mut events: Streaming<CampaignResponse>,
    state: watch::Sender<Shared>,
    requests: mpsc::WeakSender<CampaignRequest>,
    mut lost_at: Instant,
) {
    let end = |why: Lost| {
        // A first end is never overwritten by what follows it.
        state.send_if_modified(|now| {
            if now.status.is_err() {
                return false;
            }
            now.status = Err(why);
            true
        });
    };
    loop {
        let message = tokio::select! {
            message = events.message() => message,
            () = tokio::time::sleep_until(lost_at) => {
                end(Lost::Deadline);
                // Stop leading for real: resign, and read the answer while
                // the daemon may still be frozen.
                if let Some(requests) = requests.upgrade() {
                    let _ = requests.try_send(CampaignRequest { request: Some(Ask::Resign(CampaignResign {})) });
                }
                let drain = async { while let Ok(Some(_)) = events.message().await {} };
                let _ = tokio::time::timeout(DRAIN_AFTER_DEADLINE, drain).await;
                return;
            }
        };
        let reply = match message {
            Ok(Some(reply)) => reply,
            Ok(None) => return end(Lost::Broken("the daemon ended the campaign".into())),
            Err(status) => return end(Lost::Broken(status.message().to_owned())),
        };
        match reply.event() {
            // The validity counts from when the event is received.
            CampaignEvent::Extended => {
                let received = Instant::now();
                let validity = wire::from_wire(reply.valid_for);
                lost_at = self::lost_at(received, validity);
                let until = received + validity;
                state.send_if_modified(|now| {
                    let leading = now.status.is_ok();
                    if leading {
                        now.status = Ok(until);
                    }
                    leading
                });
            }
            CampaignEvent::Proclaimed => state.send_modify(|now| {
                now.value = reply.value;
                now.proclaims += 1;
            }),
            CampaignEvent::Lost => return end(Lost::Told(reply.reason)),
            CampaignEvent::Resigned | CampaignEvent::NotElected => return end(Lost::Resigned(reply.reason)),
            CampaignEvent::Elected | CampaignEvent::Unspecified => {}
        }
    }
}

impl Leadership {
    /// The election led.
    pub fn election(&self) -> &str {
        &self.election
    }

    /// This candidate's name.
    pub fn candidate(&self) -> &str {
        &self.candidate
    }

    /// The term: the election lock's fencing token, strictly increasing
    /// per election. Send it with every write; the resource must reject a
    /// term lower than one it has seen.
    pub fn term(&self) -> u64 {
        self.term
    }

    /// The published value (the campaign's, then each proclaimed one).
    pub fn value(&self) -> Vec<u8> {
        self.state.borrow().value.clone()
    }

    /// Until when the leadership is guaranteed (moves on with every
    /// extension); `None` once it ended.
    pub fn valid_until(&self) -> Option<Instant> {
        self.state.borrow().status.clone().ok()
    }

    /// Whether it still leads (neither told otherwise nor past its own
    /// deadline).
    pub fn is_leading(&self) -> bool {
        self.state.borrow().status.is_ok()
    }

    /// Resolves when this candidate stops leading: LOST, the daemon
    /// resigned for it, the stream broke, or its own deadline passed,
    /// whichever is first. Stop working as the leader at once.
    pub async fn lost(&self) -> Lost {
        let mut state = self.state.clone();
        loop {
            if let Err(why) = &state.borrow_and_update().status {
                return why.clone();
            }
            if state.changed().await.is_err() {
                return match &state.borrow().status {
                    Err(why) => why.clone(),
                    Ok(_) => Lost::Broken("the campaign's follower stopped".into()),
                };
            }
        }
    }

    /// Publishes a new value (at most 4096 bytes) and waits until the
    /// daemon has.
    ///
    /// # Errors
    /// `InvalidArgument` for a value too long (nothing is sent); `LockLost`
    /// when the leadership ended first.
    pub async fn proclaim(&self, value: impl Into<Vec<u8>>) -> Result<(), Error> {
        let value = value.into();
        crate::election::check_value(&value)?;
        let _turn = self.proclaiming.lock().await;
        let mut state = self.state.clone();
        let before = state.borrow_and_update().proclaims;
        let request = CampaignRequest {
            request: Some(Ask::Proclaim(CampaignProclaim { value })),
        };
        if let Some(requests) = &self.requests {
            let _ = requests.send(request).await;
        }
        loop {
            {
                let now = state.borrow_and_update();
                if let Err(why) = &now.status {
                    return Err(Error::LockLost(why.to_string()));
                }
                if now.proclaims > before {
                    return Ok(());
                }
            }
            if state.changed().await.is_err() {
                return Err(Error::LockLost("the campaign's follower stopped".into()));
            }
        }
    }

    /// Steps down and waits for the daemon's word; the election's lock is
    /// free at once for the next candidate.
    ///
    /// # Errors
    /// `LockLost` when the leadership had ended otherwise first.
    pub async fn resign(mut self) -> Result<(), Error> {
        if let Some(requests) = self.requests.take() {
            let resign = CampaignRequest {
                request: Some(Ask::Resign(CampaignResign {})),
            };
            let _ = requests.send(resign).await;
        }
        let ended = self.lost().await;
        match ended {
            Lost::Resigned(_) => Ok(()),
            other => Err(Error::LockLost(other.to_string())),
        }
    }
}

impl fmt::Debug for Leadership {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Leadership")
            .field("election", &self.election)
            .field("candidate", &self.candidate)
            .field("term", &self.term)
            .field("status", &self.state.borrow().status)
            .finish_non_exhaustive()
    }
}
