//! The session machine on in-memory masters with Tokio's clock paused:
//! every transition of `session.rs`, each timed exactly, no test sleeping
//! in real time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

use crate::locks::Locks;
use crate::locks::follow::Followed;
use crate::locks::queue::Waiters;
use crate::locks::session::{Command, Delivery, Event, Events, Input, Inputs, Lost, Plan, Refused, Released};
use crate::locks::who::Who;
use crate::redlock::fake::{FakeNode, Fault};
use crate::redlock::{ALONE, Acquired, Engine, EngineConfig, FailureReason, Kind};
use crate::telemetry::metrics::Metrics;

pub(crate) const TTL: Duration = Duration::from_secs(3);
pub(crate) const NODE_TIMEOUT: Duration = Duration::from_millis(50);

pub(crate) fn locks() -> (Arc<Locks<FakeNode>>, Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = (0..5).map(|i| FakeNode::new(&format!("n{i}"), 0)).collect();
    let config = EngineConfig {
        key_prefix: "t".into(),
        node_timeout: NODE_TIMEOUT,
        drift_factor: 0.01,
        min_validity: Duration::from_millis(1),
        retry_delay_min: Duration::from_millis(100),
        retry_delay_max: Duration::from_millis(300),
        daemon_id: "test".into(),
        publish_round: true,
    };
    let engine = Arc::new(Engine::new(nodes.clone(), config));
    let waiters = Arc::new(Waiters::new(16, 1024));
    let followed = Arc::new(Followed::new(Duration::from_secs(1), Duration::from_secs(60)));
    let locks = Arc::new(Locks::new(
        engine.clone(),
        waiters,
        100,
        Arc::new(Metrics::new()),
        followed,
    ));
    (locks, engine, nodes)
}

pub(crate) fn plan(resource: &str) -> Box<Plan> {
    Box::new(Plan {
        resource: resource.into(),
        name: format!("lock:{resource}"),
        kind: Kind::Exclusive,
        reentrancy_key: None,
        ttl: TTL,
        wait: Duration::ZERO,
        max_hold: Duration::from_secs(3600),
        lock_delay: Duration::ZERO,
        campaign: None,
    })
}

/// What the client heard, owned, with when (since the test began).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Heard {
    Acquired { token: u64, validity: Duration },
    NotAcquired(FailureReason),
    Extended { validity: Duration },
    Lost(Lost),
    Released { held_to_end: bool, why: Released },
    Failed(String),
    Proclaimed(Vec<u8>),
    Withdrawn(Released),
}

/// The test's end of a session: what it sends, what it heard, and whether
/// it is still there.
pub(crate) struct Client {
    pub(crate) send: mpsc::UnboundedSender<Input>,
    heard: Arc<Mutex<Vec<(Duration, Heard)>>>,
    pub(crate) gone: watch::Sender<bool>,
    session: JoinHandle<()>,
    began: Instant,
}

struct TestInputs(mpsc::UnboundedReceiver<Input>);

impl Inputs for TestInputs {
    async fn next(&mut self) -> Input {
        match self.0.recv().await {
            Some(input) => input,
            None => std::future::pending().await,
        }
    }
}

struct TestEvents {
    heard: Arc<Mutex<Vec<(Duration, Heard)>>>,
    gone: watch::Receiver<bool>,
    /// How many `IfRoom` events the reader takes (a slow reader: 0).
    room: Option<usize>,
    began: Instant,
}

impl Events for TestEvents {
    fn tell(&self, _resource: &str, told: Event<'_>, delivery: Delivery) -> Result<(), Refused> {
        if *self.gone.borrow() {
            return Err(Refused::Closed);
        }
        if delivery == Delivery::IfRoom && self.room == Some(0) {
            return Err(Refused::Full);
        }
        let heard = match told {
            Event::Acquired { lease, validity, .. } => Heard::Acquired {
                token: lease.fencing_token,
                validity,
            },
            Event::NotAcquired { reason, .. } => Heard::NotAcquired(reason),
            Event::Extended { validity, .. } => Heard::Extended { validity },
            Event::Lost(lost) => Heard::Lost(lost),
            Event::Released { held_to_end, why } => Heard::Released { held_to_end, why },
            Event::Failed(error) => Heard::Failed(format!("{error:?}")),
            Event::Proclaimed { value } => Heard::Proclaimed(value.to_vec()),
            Event::Withdrawn(why) => Heard::Withdrawn(why),
        };
        self.heard.lock().unwrap().push((self.began.elapsed(), heard));
        Ok(())
    }

    fn closed(&self) -> impl Future<Output = ()> + Send + '_ {
        self.closed_owned()
    }

    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut gone = self.gone.clone();
        async move {
            let _ = gone.wait_for(|gone| *gone).await;
        }
    }

    fn is_closed(&self) -> bool {
        *self.gone.borrow()
    }
}

pub(crate) fn start(locks: &Arc<Locks<FakeNode>>, plan: Box<Plan>) -> Client {
    start_with_room(locks, plan, None)
}

fn start_with_room(locks: &Arc<Locks<FakeNode>>, plan: Box<Plan>, room: Option<usize>) -> Client {
    let (send, inputs) = mpsc::unbounded_channel();
    let (gone, gone_rx) = watch::channel(false);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let began = Instant::now();
    let events = TestEvents {
        heard: heard.clone(),
        gone: gone_rx,
        room,
        began,
    };
    let session = tokio::spawn(
        locks
            .clone()
            .run_session(plan, Who::default(), TestInputs(inputs), events),
    );
    Client {
        send,
        heard,
        gone,
        session,
        began,
    }
}

impl Client {
    pub(crate) fn heard(&self) -> Vec<(Duration, Heard)> {
        self.heard.lock().unwrap().clone()
    }

    pub(crate) fn events(&self) -> Vec<Heard> {
        self.heard().into_iter().map(|(_, heard)| heard).collect()
    }

    pub(crate) async fn ended(self) -> Vec<(Duration, Heard)> {
        tokio::time::timeout(Duration::from_secs(3600), self.session)
            .await
            .expect("the session ends")
            .expect("the session does not panic");
        self.heard.lock().unwrap().clone()
    }

    fn since_start(&self) -> Duration {
        self.began.elapsed()
    }
}

pub(crate) fn holders(engine: &Engine<FakeNode>, nodes: &[FakeNode], name: &str) -> usize {
    let key = engine.lock_key(name);
    nodes.iter().filter(|n| n.holder(&key).is_some()).count()
}

#[tokio::test(start_paused = true)]
async fn a_session_acquires_then_extends_every_third_of_the_ttl_until_released() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(3500)).await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 5);
    let heard = client.heard();
    assert!(matches!(heard[0], (at, Heard::Acquired { token, .. }) if at < NODE_TIMEOUT && token > 0));
    let extensions: Vec<Duration> = heard
        .iter()
        .filter_map(|(at, h)| matches!(h, Heard::Extended { .. }).then_some(*at))
        .collect();
    // At 1 s, 2 s and 3 s (a third of the TTL after each round).
    assert_eq!(extensions.len(), 3, "{heard:?}");
    for (n, at) in extensions.iter().enumerate() {
        let due = TTL / 3 * (n as u32 + 1);
        assert!(*at >= due && *at < due + NODE_TIMEOUT * 2, "extension {n} at {at:?}");
    }
    client.send.send(Input::Command(Command::Release)).unwrap();
    let heard = client.ended().await;
    assert_eq!(
        heard.last().map(|(_, h)| h.clone()),
        Some(Heard::Released {
            held_to_end: true,
            why: Released::ByClient
        })
    );
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_client_that_finishes_its_side_releases_as_if_it_asked() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    client.send.send(Input::Finished).unwrap();
    let heard = client.ended().await;
    assert!(matches!(
        heard.last(),
        Some((
            _,
            Heard::Released {
                held_to_end: true,
                why: Released::ByClient
            }
        ))
    ));
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn what_a_session_cannot_take_releases_saying_why() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    client.send.send(Input::Refused("a second start")).unwrap();
    let heard = client.ended().await;
    let why = Released::Refused("a second start");
    assert!(matches!(heard.last(), Some((_, Heard::Released { why: w, .. })) if *w == why));
    assert_eq!(why.to_string(), "a second start");
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_client_that_leaves_has_its_lock_released_without_a_word() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(1500)).await;
    client.gone.send_replace(true);
    let heard = client.ended().await;
    assert!(
        heard
            .iter()
            .all(|(_, h)| matches!(h, Heard::Acquired { .. } | Heard::Extended { .. }))
    );
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_broken_stream_releases_without_a_word() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    client.send.send(Input::Gone).unwrap();
    let heard = client.ended().await;
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_lock_held_elsewhere_ends_the_session_not_acquired() {
    let (locks, engine, _) = locks();
    let other = engine
        .acquire(
            "lock:r",
            (Kind::Exclusive, TTL * 10),
            Duration::ZERO,
            std::future::pending(),
            ALONE,
            "",
        )
        .await
        .unwrap();
    assert!(matches!(other, Acquired::Granted(_)));
    let client = start(&locks, plan("r"));
    let heard = client.ended().await;
    assert_eq!(heard.len(), 1);
    assert_eq!(heard[0].1, Heard::NotAcquired(FailureReason::Taken));
}

#[tokio::test(start_paused = true)]
async fn a_session_without_a_quorum_fails_to_start() {
    let (locks, _, nodes) = locks();
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    let heard = start(&locks, plan("r")).ended().await;
    assert_eq!(heard.len(), 1);
    assert!(
        matches!(&heard[0].1, Heard::Failed(e) if e.contains("Unavailable")),
        "{heard:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_extension_a_quorum_refuses_is_lost_at_once() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(500)).await;
    // Taken behind the session's back (not through this daemon's locks).
    engine.force_release("lock:r").await.unwrap();
    let heard = client.ended().await;
    let (at, last) = heard.last().unwrap().clone();
    assert_eq!(last, Heard::Lost(Lost::ExpiredOrTakenOver));
    // Found at the first extension, a third of the TTL in.
    assert!(at >= TTL / 3 && at < TTL / 3 + NODE_TIMEOUT * 2, "lost at {at:?}");
    assert!(!heard.iter().any(|(_, h)| matches!(h, Heard::Released { .. })));
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn masters_that_stop_answering_make_the_session_lost_before_its_validity_ends() {
    let (locks, _, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    let Heard::Acquired { validity, .. } = client.events()[0].clone() else {
        panic!("acquired first");
    };
    for node in &nodes[..3] {
        node.set_fault(Fault::Down);
    }
    let heard = client.ended().await;
    let (at, last) = heard.last().unwrap().clone();
    assert_eq!(last, Heard::Lost(Lost::NotExtendedInTime));
    // Three node timeouts before the validity ends, never after.
    assert!(
        at <= validity - NODE_TIMEOUT * 3 + NODE_TIMEOUT,
        "lost at {at:?}, valid for {validity:?}"
    );
    assert!(
        at >= validity - NODE_TIMEOUT * 4,
        "lost at {at:?}, valid for {validity:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn max_hold_releases_the_lock_when_used_up() {
    let (locks, engine, nodes) = locks();
    let mut planned = plan("r");
    planned.max_hold = Duration::from_millis(4500);
    let heard = start(&locks, planned).ended().await;
    let (at, last) = heard.last().unwrap().clone();
    assert_eq!(
        last,
        Heard::Released {
            held_to_end: true,
            why: Released::MaxHoldUsedUp
        }
    );
    assert!(
        at >= Duration::from_millis(4500) && at < Duration::from_millis(4600),
        "{at:?}"
    );
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_releases_open_sessions() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    locks.close_sessions(Duration::from_millis(10)).await;
    let heard = client.ended().await;
    assert!(matches!(
        heard.last(),
        Some((
            _,
            Heard::Released {
                held_to_end: true,
                why: Released::ShuttingDown
            }
        ))
    ));
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_while_waiting_tells_the_client() {
    let (locks, engine, _) = locks();
    engine
        .acquire(
            "lock:r",
            (Kind::Exclusive, TTL * 10),
            Duration::ZERO,
            std::future::pending(),
            ALONE,
            "",
        )
        .await
        .unwrap();
    let mut planned = plan("r");
    planned.wait = Duration::from_secs(20);
    let client = start(&locks, planned);
    sleep(Duration::from_secs(1)).await;
    assert!(client.events().is_empty());
    locks.close_sessions(Duration::from_millis(10)).await;
    let heard = client.ended().await;
    assert!(
        matches!(&heard[..], [(_, Heard::Failed(e))] if e.contains("ShuttingDown")),
        "{heard:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_force_release_tells_the_session_it_lost_the_lock() {
    let (locks, engine, nodes) = locks();
    let client = start(&locks, plan("r"));
    sleep(Duration::from_millis(200)).await;
    locks.force_release("lock:r", &Who::default(), "test").await.unwrap();
    let heard = client.ended().await;
    let (at, last) = heard.last().unwrap().clone();
    assert_eq!(last, Heard::Lost(Lost::TakenAway));
    // At once, not at the next extension.
    assert!(at < Duration::from_millis(200) + NODE_TIMEOUT, "{at:?}");
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_slow_reader_misses_extensions_but_keeps_the_lock() {
    let (locks, engine, nodes) = locks();
    let client = start_with_room(&locks, plan("r"), Some(0));
    sleep(Duration::from_secs(10)).await;
    assert_eq!(client.events().len(), 1, "only ACQUIRED: {:?}", client.events());
    assert_eq!(holders(&engine, &nodes, "lock:r"), 5);
    assert!(nodes[0].extend_calls() >= 9);
    client.send.send(Input::Command(Command::Release)).unwrap();
    client.ended().await;
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_client_gone_while_waiting_leaves_no_lock_behind() {
    let (locks, engine, nodes) = locks();
    let other = engine
        .acquire(
            "lock:r",
            (Kind::Exclusive, TTL),
            Duration::ZERO,
            std::future::pending(),
            ALONE,
            "",
        )
        .await
        .unwrap();
    let Acquired::Granted(other) = other else {
        panic!("granted")
    };
    let mut planned = plan("r");
    planned.wait = Duration::from_secs(20);
    let client = start(&locks, planned);
    sleep(Duration::from_secs(1)).await;
    client.gone.send_replace(true);
    // The other holder lets go: nobody may end up holding it.
    engine.release("lock:r", &other.value).await.unwrap();
    let waited = client.since_start();
    let heard = client.ended().await;
    assert!(heard.is_empty(), "{heard:?}");
    sleep(Duration::from_secs(1)).await;
    assert!(waited < Duration::from_secs(2));
    assert_eq!(holders(&engine, &nodes, "lock:r"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_session_that_waits_gets_the_lock_when_it_is_let_go() {
    let (locks, engine, nodes) = locks();
    let first = start(&locks, plan("r"));
    sleep(Duration::from_millis(100)).await;
    let mut planned = plan("r");
    planned.wait = Duration::from_secs(20);
    let second = start(&locks, planned);
    sleep(Duration::from_secs(2)).await;
    assert!(second.events().is_empty());
    first.send.send(Input::Command(Command::Release)).unwrap();
    let first_token = match first.events()[0] {
        Heard::Acquired { token, .. } => token,
        _ => panic!("acquired"),
    };
    first.ended().await;
    sleep(Duration::from_millis(500)).await;
    let Some(Heard::Acquired { token, .. }) = second.events().first().cloned() else {
        panic!("the second session acquires: {:?}", second.events());
    };
    assert!(token > first_token);
    assert_eq!(holders(&engine, &nodes, "lock:r"), 5);
}
