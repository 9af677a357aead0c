//! The test stores of the checker (`history.rs`): [`FencedStore`], append-only and fenced by tokens, and
//! [`UnfencedStore`], a read-modify-write counter; each audits its own records into a [`Report`].

use std::collections::HashMap;
use std::fmt::{self, Display, Formatter};
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::history::{Report, Violation, lock};

/// An acknowledged (or refused) store write; `token` is None in the unfenced store, whose payload is the
/// counter value written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub client: String,
    pub token: Option<u64>,
    pub payload: String,
    pub at: Instant,
}

impl Write {
    fn new(client: impl Display, token: Option<u64>, payload: impl Display) -> Write {
        let (client, payload, at) = (client.to_string(), payload.to_string(), Instant::now());
        Write {
            client,
            token,
            payload,
            at,
        }
    }
}

impl Display for Write {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (client, payload) = (&self.client, &self.payload);
        match self.token {
            Some(token) => write!(f, "token {token} from {client} (payload {payload:?})"),
            None => write!(f, "value {payload} from {client}"),
        }
    }
}

/// A named test store shared by clones: [`FencedStore`] or [`UnfencedStore`].
#[derive(Clone, Debug)]
pub struct Store<S> {
    name: Arc<str>,
    state: Arc<Mutex<S>>,
}

impl<S: Default> Store<S> {
    pub fn new(name: impl Display) -> Store<S> {
        let name = name.to_string().into();
        Store {
            name,
            state: Arc::default(),
        }
    }

    /// Direct access to the internals, bypassing any fence: for reading, and for forging in checker tests.
    pub fn tamper<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut lock(&self.state))
    }
}

/// Inside a [`FencedStore`]: `log` holds every accepted write in order, `contents` the data (one payload
/// appended per accepted write), `rejected` every refused write.
#[derive(Clone, Debug, Default)]
pub struct FencedState {
    pub log: Vec<Write>,
    pub contents: Vec<String>,
    pub rejected: Vec<Write>,
}

/// An append-only store fenced by tokens. It accepts a write whose token is above every token accepted
/// before, or EQUAL to the highest one and from the client that wrote it (repeated writes under one
/// grant); it refuses anything else. Tokens are unique per grant, so a duplicated token from a second
/// client is refused too.
pub type FencedStore = Store<FencedState>;

impl FencedStore {
    /// `Err(highest accepted token)` when refused.
    pub fn write(&self, client: impl Display, token: u64, payload: impl Display) -> Result<(), u64> {
        let mut state = lock(&self.state);
        let write = Write::new(client, Some(token), payload);
        if let Some(high) = state.log.last()
            && let Some(highest) = high.token
            && (token < highest || (token == highest && write.client != high.client))
        {
            state.rejected.push(write);
            return Err(highest);
        }
        state.contents.push(write.payload.clone());
        state.log.push(write);
        Ok(())
    }

    /// The accepted writes, in order.
    pub fn writes(&self) -> Vec<Write> {
        lock(&self.state).log.clone()
    }
}

/// A counter without fencing, used read-modify-write (`let v = s.read(); ...; s.write(client, v + 1)`).
/// Every write is one acknowledged increment, so a stalled client writing from a stale read loses updates.
pub type UnfencedStore = Store<(u64, Vec<Write>)>;

impl UnfencedStore {
    pub fn read(&self) -> u64 {
        lock(&self.state).0
    }

    pub fn write(&self, client: impl Display, value: u64) {
        let mut state = lock(&self.state);
        state.0 = value;
        state.1.push(Write::new(client, None, value));
    }
}

/// A store the checker verifies from its own records.
pub trait Audit {
    fn audit(&self, report: &mut Report);
}

impl Audit for FencedStore {
    /// StaleAccepted: an accepted write that the fence rule forbids, given the writes before it.
    /// LostWrite: accepted writes whose payloads are missing from the contents.
    fn audit(&self, report: &mut Report) {
        let (state, store) = (lock(&self.state), self.name.to_string());
        report.stats.writes += state.log.len();
        report.stats.rejected += state.rejected.len();
        let mut high: Option<&Write> = None;
        for write in &state.log {
            match high {
                Some(h) if write.token < h.token || (write.token == h.token && write.client != h.client) => {
                    let stale = Violation::StaleAccepted(store.clone(), write.clone(), h.clone());
                    report.violations.push(stale);
                }
                _ => high = Some(write),
            }
        }
        let mut present: HashMap<&str, usize> = HashMap::new();
        state.contents.iter().for_each(|p| *present.entry(p).or_default() += 1);
        let mut lost = Vec::new();
        for write in &state.log {
            match present.get_mut(write.payload.as_str()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => lost.push(write.clone()),
            }
        }
        if !lost.is_empty() {
            let (acknowledged, survived) = (state.log.len(), state.log.len() - lost.len());
            report
                .violations
                .push(Violation::LostWrite(store, acknowledged, survived, lost));
        }
    }
}

impl Audit for UnfencedStore {
    /// LostWrite when the final counter is below the number of acknowledged increments; the suspects are
    /// the writes that did not raise the value before them by one (made from a stale read).
    fn audit(&self, report: &mut Report) {
        let (state, store) = (lock(&self.state), self.name.to_string());
        let (survived, acknowledged) = (state.0 as usize, state.1.len());
        report.stats.writes += acknowledged;
        if survived < acknowledged {
            let mut before = 0;
            let mut suspects = Vec::new();
            for write in &state.1 {
                let value: u64 = write.payload.parse().expect("a counter value");
                if value != before + 1 {
                    suspects.push(write.clone());
                }
                before = value;
            }
            let lost = Violation::LostWrite(store, acknowledged, survived, suspects);
            report.violations.push(lost);
        }
    }
}
