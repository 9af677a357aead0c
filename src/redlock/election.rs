//! Elections over the engine (docs/design.md#elections): a leader's record
//! — its term, its name and its value — is written beside the election's
//! lock on every master, only while that master's lock holds the leader's
//! value; the leader is who a majority of masters agree on, lock and
//! record alike.

use std::time::Duration;

use super::fanout::gather;
use super::node::{Extension, Node, RecordView};
use super::{Engine, Error, LockValue};

/// Who leads an election, as a majority of masters record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// The term: the fencing token of the leader's lease, exactly.
    pub term: u64,
    /// The candidate's name.
    pub candidate: String,
    /// The value it published.
    pub value: Vec<u8>,
    /// When its term began, on the masters' clocks (ms since the epoch):
    /// the earliest grant among the agreeing masters.
    pub since_ms: u64,
}

/// A leader together with the lock value that holds its term (for a
/// resignation or a proclamation from outside its stream; never leaves the
/// daemon).
#[derive(Debug, Clone)]
pub(crate) struct Term {
    pub leader: Leader,
    pub value: LockValue,
}

/// A record: `<lock value>\n<term>\n<candidate>\n<value bytes>`.
fn record(value: &LockValue, term: u64, candidate: &str, published: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.expose().len() + candidate.len() + published.len() + 24);
    out.extend_from_slice(value.expose().as_bytes());
    out.push(b'\n');
    out.extend_from_slice(term.to_string().as_bytes());
    out.push(b'\n');
    out.extend_from_slice(candidate.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(published);
    out
}

/// What one master's lock and record say: its vote, when the record was
/// written by the value that holds the lock there.
fn vote(view: &RecordView) -> Option<(String, Leader)> {
    let (held, record) = (view.value.as_ref()?, view.record.as_ref()?);
    let mut fields = record.splitn(4, |b| *b == b'\n');
    let writer = std::str::from_utf8(fields.next()?).ok()?;
    if writer != held {
        return None;
    }
    let term = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let candidate = std::str::from_utf8(fields.next()?).ok()?.to_owned();
    let value = fields.next()?.to_vec();
    let leader = Leader {
        term,
        candidate,
        value,
        since_ms: view.granted_ms.unwrap_or(0),
    };
    Some((held.clone(), leader))
}

impl<N: Node> Engine<N> {
    /// The key of the record of election lock `name`: in the lock's bucket.
    pub fn record_key(&self, name: &str) -> String {
        let key = self.lock_key(name);
        match super::buckets::split(&key) {
            Some((head, rest)) => format!("{head}elected:{rest}"),
            None => format!("{key}:elected"),
        }
    }

    /// Writes the record of the leader holding `value` on every master;
    /// true when a majority took it (they hold the lock for `value`).
    ///
    /// # Errors
    /// `Unavailable` when fewer than a majority answered.
    pub async fn write_record(
        &self,
        name: &str,
        value: &LockValue,
        (term, candidate, published): (u64, &str, &[u8]),
        ttl: Duration,
    ) -> Result<bool, Error> {
        let (key, record_key) = (self.lock_key(name), self.record_key(name));
        let record = record(value, term, candidate, published);
        let quorum = self.quorum();
        let calls = self.nodes().iter().map(|node| {
            let (key, record_key, record) = (&key, &record_key, &record);
            async move {
                node.write_record(key, record_key, value.expose(), record, ttl)
                    .await
                    .ok()
            }
        });
        let settled = |answers: &[Option<Option<bool>>]| {
            answers.iter().filter(|a| matches!(a, Some(Some(true)))).count() >= quorum
        };
        let (answers, _) = gather(calls, settled, self.node_timeout()).await;
        let answers: Vec<Option<bool>> = answers.into_iter().map(Option::flatten).collect();
        Ok(self.tally(&answers)? >= quorum)
    }

    /// Keeps the record of the leader holding `value` as long as its lock:
    /// true when a majority still held it.
    ///
    /// # Errors
    /// `Unavailable` when fewer than a majority answered.
    pub async fn extend_record(&self, name: &str, value: &LockValue, ttl: Duration) -> Result<bool, Error> {
        let record_key = self.record_key(name);
        let quorum = self.quorum();
        let calls = self.nodes().iter().map(|node| {
            let extension = [Extension {
                key: &record_key,
                value: value.expose(),
                ttl,
            }];
            async move {
                node.extend(&extension)
                    .await
                    .ok()
                    .map(|held| held.first() == Some(&true))
            }
        });
        let settled = |answers: &[Option<Option<bool>>]| {
            answers.iter().filter(|a| matches!(a, Some(Some(true)))).count() >= quorum
        };
        let (answers, _) = gather(calls, settled, self.node_timeout()).await;
        let answers: Vec<Option<bool>> = answers.into_iter().map(Option::flatten).collect();
        Ok(self.tally(&answers)? >= quorum)
    }

    /// Who leads election lock `name`, with the lock value of its term:
    /// `None` when no majority agrees on one leader.
    ///
    /// # Errors
    /// `Unavailable` when fewer than a majority answered.
    pub(crate) async fn leader(&self, name: &str) -> Result<Option<Term>, Error> {
        let (key, record_key) = (self.lock_key(name), self.record_key(name));
        let quorum = self.quorum();
        let calls = self.nodes().iter().map(|node| {
            let (key, record_key) = (&key, &record_key);
            async move { node.read_record(key, record_key).await.ok() }
        });
        let (answers, _) = gather(calls, |_| false, self.node_timeout()).await;
        let answered = answers.iter().filter(|a| matches!(a, Some(Some(_)))).count();
        if answered < quorum {
            return Err(self.unavailable(answered, format!("{} gave no answer", answers.len() - answered)));
        }
        let votes: Vec<(String, Leader)> = answers.iter().flatten().flatten().filter_map(vote).collect();
        for (value, leader) in &votes {
            let agreeing: Vec<&Leader> = (votes.iter())
                .filter(|(v, l)| {
                    v == value && l.term == leader.term && l.candidate == leader.candidate && l.value == leader.value
                })
                .map(|(_, l)| l)
                .collect();
            if agreeing.len() >= quorum {
                let since_ms = agreeing.iter().map(|l| l.since_ms).min().unwrap_or(0);
                let Ok(value) = LockValue::parse(value) else {
                    continue;
                };
                return Ok(Some(Term {
                    leader: Leader {
                        since_ms,
                        ..leader.clone()
                    },
                    value,
                }));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
#[path = "election_tests.rs"]
mod tests;
