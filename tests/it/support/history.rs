//! Safety checking for fault-injection tests: a shared [`History`] of lock operations, test stores
//! ([`FencedStore`], [`UnfencedStore`]) and [`check`], which turns them into a [`Report`] of violations.
//!
//! ```ignore
//! let op = history.invoke(client, resource, Kind::Acquire);               // just before sending
//! history.complete(op, Reply::Granted(Grant { token, validity, value, shared }));  // just after the reply
//! let op = history.invoke(client, resource, Kind::Release(value));        // after the last use of the lock
//! history.complete(op, Reply::Released);
//! check(&history, &[&fenced, &unfenced], Options { drift_margin, ..Options::default() }).assert_safe();
//! ```
//! `Unknown` is an error or timeout that may or may not have taken effect, as is an op never completed.
//! Synthetic histories use `invoke_at`/`complete_at` with [`History::at`]; messages show offsets from
//! the history's epoch.
//!
//! Model. A grant is a `Granted` acquire; its window is `[complete, invoke + validity]` (the client counts
//! validity from when it sent the request). An `Extended` extend of the lease value moves the end to
//! `extend.invoke + validity` (the last one invoked wins). A release of the value, WHATEVER its reply, ends
//! the window at its invoke: the holder stops using the lock before it sends release, and a timed-out
//! release must not stretch the window. Failed and unknown acquires are never grants: the daemon releases
//! failed attempts on every master, and a grant the client never learned of is used by nobody, so it can
//! neither overlap anyone's use nor carry a token to a fenced store (it can only delay others: liveness).
//!
//! Shared grants (readers) may overlap each other and share a token; a writer overlaps no grant. Grants of
//! one value (a reentrant lock handed out again) are one lock, held until as many releases as grants. Tokens:
//! a writer's is above every grant's completed before it was sent, a reader's at least every writer's
//! completed before it was sent (docs/design.md#shared-locks). Readers write to no store. Permits of a
//! semaphore of N: each slot is a lock of its own (exclusion and tokens per slot), and at no moment are
//! more than N permits of a resource held (docs/design.md#semaphores).

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Display, Formatter};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

pub use super::stores::{Audit, FencedStore, UnfencedStore, Write};

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What an operation does; Extend and Release name the lease value they act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Acquire,
    Extend(String),
    Release(String),
}

/// What a granted acquire returned; `shared` for a reader of a read-write lock; `permits` (0 for a lock)
/// and `slot` for a permit of a semaphore.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Grant {
    pub token: u64,
    pub validity: Duration,
    pub value: String,
    pub shared: bool,
    pub permits: u32,
    pub slot: u32,
}

/// How an operation ended: `Granted` (acquire), `Extended` (extend, new validity) and `Released` (release)
/// are the Ok outcomes of their kinds. `Fail` (a definite "no": `acquired`/`extended`/`released` false)
/// and `Unknown` (error, timeout) fit every kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Granted(Grant),
    Extended(Duration),
    Released,
    Fail,
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub usize);

/// One recorded operation; `complete` is None (and `reply` Unknown) while pending.
#[derive(Clone, Debug)]
pub struct Op {
    pub id: OpId,
    pub client: String,
    pub resource: String,
    pub kind: Kind,
    pub invoke: Instant,
    pub complete: Option<Instant>,
    pub reply: Reply,
}

/// The shared record of operations: clones record into the same history, from any task or thread.
#[derive(Clone, Debug)]
pub struct History {
    epoch: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
}

impl History {
    /// A history whose epoch (time zero in messages) is now.
    pub fn new() -> History {
        History {
            epoch: Instant::now(),
            ops: Arc::default(),
        }
    }

    /// `epoch + offset`, for synthetic histories.
    pub fn at(&self, offset: Duration) -> Instant {
        self.epoch + offset
    }

    /// Records the start of an operation now: call it just before sending the request.
    pub fn invoke(&self, client: impl Display, resource: impl Display, kind: Kind) -> OpId {
        self.invoke_at(client, resource, kind, Instant::now())
    }

    pub fn invoke_at(&self, client: impl Display, resource: impl Display, kind: Kind, at: Instant) -> OpId {
        let mut ops = lock(&self.ops);
        let (id, client, resource) = (OpId(ops.len()), client.to_string(), resource.to_string());
        ops.push(Op {
            id,
            client,
            resource,
            kind,
            invoke: at,
            complete: None,
            reply: Reply::Unknown,
        });
        id
    }

    /// Records the end of an operation now: call it as soon as the reply (or error) arrives.
    pub fn complete(&self, op: OpId, reply: Reply) {
        self.complete_at(op, reply, Instant::now())
    }

    /// Panics when `reply` does not fit the op's kind, or the op is already complete or completes before
    /// its invoke.
    pub fn complete_at(&self, op: OpId, reply: Reply, at: Instant) {
        let mut ops = lock(&self.ops);
        let entry = &mut ops[op.0];
        let fits = match &reply {
            Reply::Granted(_) => entry.kind == Kind::Acquire,
            Reply::Extended(_) => matches!(entry.kind, Kind::Extend(_)),
            Reply::Released => matches!(entry.kind, Kind::Release(_)),
            Reply::Fail | Reply::Unknown => true,
        };
        assert!(fits, "{op:?}: a {:?} cannot complete with {reply:?}", entry.kind);
        assert!(entry.complete.is_none(), "{op:?} completed twice");
        assert!(at >= entry.invoke, "{op:?} completes before its invoke");
        (entry.complete, entry.reply) = (Some(at), reply);
    }

    /// A snapshot of every operation, in the order `invoke` was called.
    pub fn ops(&self) -> Vec<Op> {
        lock(&self.ops).clone()
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Two grants' windows may overlap by up to this much (clock drift between clients and masters).
    pub drift_margin: Duration,
    /// `(resource, healed_at, deadline)`: after the faults healed, an acquire of the resource must be
    /// granted (complete) within `[healed_at, healed_at + deadline]`.
    pub liveness: Vec<(String, Instant, Duration)>,
}

impl Options {
    pub fn liveness(mut self, resource: impl Display, healed_at: Instant, deadline: Duration) -> Options {
        self.liveness.push((resource.to_string(), healed_at, deadline));
        self
    }
}

/// A grant as shown in a violation; times are offsets from the history's epoch, `end` that of its window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub resource: String,
    pub client: String,
    pub shared: bool,
    pub token: u64,
    pub op: OpId,
    pub invoke: Duration,
    pub start: Duration,
    pub end: Duration,
}

fn t(offset: Duration) -> String {
    format!("t+{:.3}s", offset.as_secs_f64())
}

impl Display for Held {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (client, token, op) = (&self.client, self.token, self.op.0);
        let (invoke, start, end) = (t(self.invoke), t(self.start), t(self.end));
        let kind = if self.shared { " (reader)" } else { "" };
        write!(f, "{client}{kind} token {token} (acquire #{op} sent {invoke}, ")?;
        write!(f, "granted {start}, window ends {end})")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    Overlap,
    TokenOrder,
    TokenDuplicate,
    TooManyPermits,
    StaleAccepted,
    LostWrite,
    Liveness,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// `(first, second, overlap)`: the windows of two grants of one resource overlap by more than the
    /// drift margin; `first` starts first.
    Overlap(Held, Held, Duration),
    /// `(earlier, later)`: `later` was invoked after `earlier` was granted, yet its token is not larger
    /// (a reader's: is smaller than a writer's). `earlier` is the grant with the largest token among those
    /// completed before `later` was invoked (writers only, for a reader).
    TokenOrder(Held, Held),
    /// Two grants of one resource carry the same token (two readers may).
    TokenDuplicate(Held, Held),
    /// `(permits, holders)`: more permits of a semaphore of `permits` held at one moment (the start of
    /// the last of `holders`) than it has.
    TooManyPermits(u32, Vec<Held>),
    /// `(store, stale, after)`: a fenced store accepted `stale` after `after`, whose token was higher (or
    /// equal, from another client).
    StaleAccepted(String, Write, Write),
    /// `(store, acknowledged, survived, suspects)`: fewer writes survive than were acknowledged; the
    /// suspects are the missing writes (fenced store) or the writes made from a stale read (unfenced).
    LostWrite(String, usize, usize, Vec<Write>),
    /// `(resource, healed_at, deadline, first_grant)`: no grant completed within the deadline after the
    /// faults healed; `first_grant` is the first one after healing, if any (offsets from the epoch).
    Liveness(String, Duration, Duration, Option<Duration>),
}

impl Violation {
    pub fn kind(&self) -> ViolationKind {
        match self {
            Violation::Overlap(..) => ViolationKind::Overlap,
            Violation::TokenOrder(..) => ViolationKind::TokenOrder,
            Violation::TokenDuplicate(..) => ViolationKind::TokenDuplicate,
            Violation::TooManyPermits(..) => ViolationKind::TooManyPermits,
            Violation::StaleAccepted(..) => ViolationKind::StaleAccepted,
            Violation::LostWrite(..) => ViolationKind::LostWrite,
            Violation::Liveness(..) => ViolationKind::Liveness,
        }
    }
}

impl Display for Violation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} ", self.kind())?;
        match self {
            Violation::Overlap(a, b, overlap) => write!(f, "on {}: {a} and {b} overlap by {overlap:?}", a.resource),
            Violation::TokenOrder(a, b) => {
                write!(f, "on {}: {b} was sent after {a} was granted, ", a.resource)?;
                let relation = if b.shared { "<" } else { "<=" };
                write!(f, "yet {} {relation} {}", b.token, a.token)
            }
            Violation::TokenDuplicate(a, b) => {
                write!(f, "on {}: token {} granted twice: {a} and {b}", a.resource, a.token)
            }
            Violation::TooManyPermits(permits, holders) => {
                let resource = holders.first().map_or("?", |h| h.resource.as_str());
                let holders: Vec<String> = holders.iter().map(Held::to_string).collect();
                write!(
                    f,
                    "on {resource}: {} of {permits} permits held at once: ",
                    holders.len()
                )?;
                write!(f, "[{}]", holders.join(", "))
            }
            Violation::StaleAccepted(store, stale, after) => write!(f, "by {store}: accepted {stale} after {after}"),
            Violation::LostWrite(store, acknowledged, survived, suspects) => {
                let suspects: Vec<String> = suspects.iter().map(Write::to_string).collect();
                write!(
                    f,
                    "in {store}: {acknowledged} writes acknowledged, {survived} survive; "
                )?;
                write!(f, "suspects: [{}]", suspects.join(", "))
            }
            Violation::Liveness(resource, healed_at, deadline, first) => {
                let (healed, by) = (t(*healed_at), t(*healed_at + *deadline));
                let first = first.map_or("none".into(), t);
                write!(f, "on {resource}: faults healed at {healed}, no grant by {by}; ")?;
                write!(f, "first grant after: {first}")
            }
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub ops: usize,
    pub acquires: usize,
    pub grants: usize,
    pub extends: usize,
    pub releases: usize,
    pub failed: usize,
    /// Including ops never completed.
    pub unknown: usize,
    pub writes: usize,
    pub rejected: usize,
    pub violations: BTreeMap<ViolationKind, usize>,
}

impl Display for Stats {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (ops, acquires, grants) = (self.ops, self.acquires, self.grants);
        write!(f, "{ops} ops: {acquires} acquires ({grants} granted), ")?;
        write!(f, "{} extends, {} releases, ", self.extends, self.releases)?;
        write!(f, "{} failed, {} unknown; ", self.failed, self.unknown)?;
        write!(f, "{} store writes, {} rejected; ", self.writes, self.rejected)?;
        let kinds: Vec<String> = self.violations.iter().map(|(k, n)| format!("{k:?} {n}")).collect();
        let kinds = if kinds.is_empty() {
            "none".into()
        } else {
            kinds.join(", ")
        };
        write!(f, "violations: {kinds}")
    }
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub violations: Vec<Violation>,
    pub stats: Stats,
}

impl Report {
    pub fn has(&self, kind: ViolationKind) -> bool {
        self.count(kind) > 0
    }

    pub fn count(&self, kind: ViolationKind) -> usize {
        self.violations.iter().filter(|v| v.kind() == kind).count()
    }

    /// Panics listing every violation.
    #[track_caller]
    pub fn assert_safe(&self) {
        assert!(self.violations.is_empty(), "the history is not safe: {self}");
    }
}

impl Display for Report {
    /// The stats line, then one line per violation.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stats)?;
        self.violations.iter().try_for_each(|v| write!(f, "\n  - {v}"))
    }
}

/// A grant: its acquire, lease, and window `[start, end]`.
type Window<'a> = (&'a Op, &'a Grant, Instant, Instant);

/// Checks the history (Overlap, TokenOrder, TokenDuplicate, Liveness) and audits the stores
/// (StaleAccepted, LostWrite). Quadratic in the grants of a resource: fine for test histories.
pub fn check(history: &History, stores: &[&dyn Audit], options: Options) -> Report {
    let ops = history.ops();
    let since = |at: Instant| at.saturating_duration_since(history.epoch);
    let mut stats = Stats::default();
    let mut grants: Vec<Window> = Vec::new();
    for op in &ops {
        match op.kind {
            Kind::Acquire => stats.acquires += 1,
            Kind::Extend(_) => stats.extends += 1,
            Kind::Release(_) => stats.releases += 1,
        }
        match (&op.reply, op.complete) {
            (Reply::Granted(grant), Some(start)) => grants.push((op, grant, start, op.invoke + grant.validity)),
            (Reply::Fail, _) => stats.failed += 1,
            (Reply::Unknown, _) => stats.unknown += 1,
            _ => {}
        }
    }
    (stats.ops, stats.grants) = (ops.len(), grants.len());

    // Extends (in invoke order), then releases, move the ends of the windows of their lease values. A
    // value granted k times (a reentrant lock: the same lease handed out again) is one lock, held until its
    // k-th release.
    let key = |op: &Op, value: &str| (op.resource.clone(), value.to_owned());
    let mut index: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, g) in grants.iter().enumerate() {
        index.entry(key(g.0, &g.1.value)).or_default().push(i);
    }
    let mut extends: Vec<&Op> = ops.iter().filter(|op| matches!(op.reply, Reply::Extended(_))).collect();
    extends.sort_by_key(|op| op.invoke);
    for op in extends {
        let (Kind::Extend(value), Reply::Extended(validity)) = (&op.kind, &op.reply) else {
            continue;
        };
        for &i in index.get(&key(op, value)).into_iter().flatten() {
            grants[i].3 = op.invoke + *validity;
        }
    }
    let mut releases: HashMap<_, Vec<Instant>> = HashMap::new();
    for op in &ops {
        if let Kind::Release(value) = &op.kind {
            releases.entry(key(op, value)).or_default().push(op.invoke);
        }
    }
    for (k, mut invokes) in releases {
        let Some(held) = index.get(&k) else { continue };
        invokes.sort();
        if let Some(&last) = invokes.get(held.len() - 1) {
            held.iter().for_each(|&i| grants[i].3 = grants[i].3.min(last));
        }
    }

    let held = |&(op, grant, start, end): &Window| Held {
        resource: op.resource.clone(),
        client: op.client.clone(),
        shared: grant.shared,
        token: grant.token,
        op: op.id,
        invoke: since(op.invoke),
        start: since(start),
        end: since(end),
    };
    let mut violations = Vec::new();
    // A permit is a lock on its slot: the rules of locks hold per slot.
    let mut by_resource: BTreeMap<(&str, Option<u32>), Vec<&Window>> = BTreeMap::new();
    for g in &grants {
        let slot = (g.1.permits > 0).then_some(g.1.slot);
        by_resource.entry((&g.0.resource, slot)).or_default().push(g);
    }
    let mut permits: BTreeMap<&str, Vec<&Window>> = BTreeMap::new();
    for g in grants.iter().filter(|g| g.1.permits > 0) {
        permits.entry(&g.0.resource).or_default().push(g);
    }
    for list in permits.values() {
        // At each grant's start, the permits whose windows cover it (less the drift margin).
        let covering = |at: Instant| -> Vec<&Window> {
            (list.iter().copied())
                .filter(|w| w.2 <= at && at + options.drift_margin < w.3)
                .collect()
        };
        let most = list
            .iter()
            .map(|g| covering(g.2))
            .max_by_key(Vec::len)
            .unwrap_or_default();
        let allowed = list.iter().map(|g| g.1.permits).min().unwrap_or(0);
        if most.len() > allowed as usize {
            let holders = most.iter().map(|w| held(w)).collect();
            violations.push(Violation::TooManyPermits(allowed, holders));
        }
    }
    for mut list in by_resource.into_values() {
        list.sort_by_key(|g| (g.2, g.0.id));
        for (i, &a) in list.iter().enumerate() {
            for &b in &list[i + 1..] {
                // Two readers, or one lock handed out again under a reentrancy key.
                let readers = (a.1.shared && b.1.shared) || a.1.value == b.1.value;
                let overlap = a.3.min(b.3).saturating_duration_since(b.2);
                if overlap > options.drift_margin && !readers {
                    violations.push(Violation::Overlap(held(a), held(b), overlap));
                }
                if a.1.token == b.1.token && !readers {
                    violations.push(Violation::TokenDuplicate(held(a), held(b)));
                }
            }
            // With `a` as the later grant: the earlier grant with the largest token (a writer's, for a
            // reader), which a writer must exceed and a reader must reach.
            let earlier = (list.iter())
                .filter(|e| e.2 < a.0.invoke && !(a.1.shared && e.1.shared) && e.1.value != a.1.value)
                .max_by_key(|e| e.1.token);
            let behind = |e: &&&Window| a.1.token < e.1.token || (a.1.token == e.1.token && !a.1.shared);
            if let Some(&earlier) = earlier.filter(behind) {
                violations.push(Violation::TokenOrder(held(earlier), held(a)));
            }
        }
    }
    for (resource, healed_at, deadline) in options.liveness {
        let after = grants.iter().filter(|g| g.0.resource == resource && g.2 >= healed_at);
        let first = after.map(|g| g.2).min();
        if first.is_none_or(|at| at > healed_at + deadline) {
            let (healed_at, first) = (since(healed_at), first.map(since));
            violations.push(Violation::Liveness(resource, healed_at, deadline, first));
        }
    }

    let mut report = Report { violations, stats };
    stores.iter().for_each(|store| store.audit(&mut report));
    for v in &report.violations {
        *report.stats.violations.entry(v.kind()).or_default() += 1;
    }
    report
}
