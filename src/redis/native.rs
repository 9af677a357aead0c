//! Releases by the server's own compare-and-delete
//! (docs/design.md#native-release): on a standalone Valkey 9 or later, a
//! release of a lock this daemon took on that master goes as `DELIFEQ` of
//! the whole value it stored there — pipelined with `EXISTS` of the lock's
//! waiting mark when the release is announced if waited for — beside the
//! batch's `ROUND` for the rest. A value the master no longer holds whole
//! (re-granted, handed off, or never known here) falls back to `ROUND`'s
//! release, which compares the prefix; so does a command the server
//! refuses, which turns the path off until the next connection.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use fred::prelude::{ClientLike, Value};
use fred::types::{ClusterHash, CustomCommand};
use tokio::time::Instant;

use super::conn::Conn;
use super::scripts::released_channel;
use crate::redlock::node::NodeError;

/// A request's keys (its lock key, waiting mark, bucket's fence counter
/// and marker) and its arguments (kind, value, TTL, holder), as a batch
/// carries it (`batch.rs`).
type Request<'a> = (&'a [String; 4], &'a [Value; 4]);

/// A master's lane of batches, as the native path uses it.
pub(super) trait Lane {
    fn conn(&self) -> &Conn;
    fn stored(&self) -> &Stored;
    /// `ROUND` with its keys declared, for `requests`.
    async fn round(&self, requests: &[Request<'_>]) -> Result<Vec<i64>, NodeError>;
}

/// The records this daemon wrote on one master, by lock value, while their
/// locks may still be held there: what follows the value in the stored
/// string (`\ncounter\ngranted_ms\n` + the holder tag,
/// docs/design.md#who-holds-it).
#[derive(Default)]
pub(super) struct Stored {
    inner: Mutex<Records>,
}

#[derive(Default)]
struct Records {
    by_value: HashMap<Box<str>, (Box<str>, Instant)>,
    /// Expired records are swept when the map has doubled since the last
    /// sweep (a lock that expired unreleased leaves one behind).
    swept_at_len: usize,
}

impl Stored {
    fn records(&self) -> std::sync::MutexGuard<'_, Records> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lock `value` was granted with `counter` at `granted_ms`, held by
    /// `holder`, for `ttl` (an extension outlives the record: its release
    /// then goes by `ROUND`).
    fn granted(&self, value: &str, counter: i64, granted_ms: u64, holder: &str, ttl: Duration) {
        let record = format!("\n{counter}\n{granted_ms}\n{holder}").into_boxed_str();
        let now = Instant::now();
        let mut records = self.records();
        if records.by_value.len() >= 2 * records.swept_at_len.max(1024) {
            records.by_value.retain(|_, (_, until)| *until > now);
            records.swept_at_len = records.by_value.len();
        }
        records.by_value.insert(value.into(), (record, now + ttl));
    }

    /// Records the grants of a `ROUND` batch answered at `granted_ms`.
    pub(super) fn granted_in(&self, requests: &[Request<'_>], answers: &[i64], granted_ms: u64) {
        for ((_, args), counter) in requests.iter().zip(answers) {
            if let (Some("L"), Some(value), Value::Integer(ttl), Some(holder), 1..) =
                (text(&args[0]), text(&args[1]), &args[2], text(&args[3]), *counter)
            {
                let ttl = Duration::from_millis(ttl.unsigned_abs());
                self.granted(value, *counter, granted_ms, holder, ttl);
            }
        }
    }

    /// The whole stored value of lock `value`, forgotten here.
    fn take(&self, value: &str) -> Option<String> {
        let (record, _) = self.records().by_value.remove(value)?;
        Some(format!("{value}{record}"))
    }

    /// How many records are kept (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.records().by_value.len()
    }
}

/// The text of a string argument.
pub(super) fn text(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A release sent natively: its place in the batch, its keys, whether a
/// waiting mark is looked for.
struct Native<'a> {
    at: usize,
    keys: &'a [String; 4],
    waited: bool,
}

/// A batch for a master with `DELIFEQ`: its releases of known values
/// natively, the rest in `ROUND`; answers in the order given.
pub(super) async fn call(lane: &impl Lane, requests: &[Request<'_>]) -> Result<Vec<i64>, NodeError> {
    let locked: HashSet<&str> = (requests.iter())
        .filter(|(_, args)| text(&args[0]) == Some("L"))
        .map(|(keys, _)| keys[0].as_str())
        .collect();
    let pipeline = lane.conn().client.pipeline();
    let mut natives = Vec::new();
    for (at, (keys, args)) in requests.iter().enumerate() {
        let kind = text(&args[0]);
        if kind == Some("L") {
            continue;
        }
        // Whichever way it goes, a release ends the record's use.
        let stored = text(&args[1]).and_then(|value| lane.stored().take(value));
        let waited = match kind {
            Some("U") => false,
            Some("W") => true,
            _ => continue,
        };
        // A lock of the same key in the batch stays in order with it.
        let Some(stored) = stored.filter(|_| !locked.contains(keys[0].as_str())) else {
            continue;
        };
        let delifeq = CustomCommand::new_static("DELIFEQ", ClusterHash::FirstKey, false);
        queue(pipeline.custom::<(), _>(delifeq, vec![keys[0].clone(), stored]).await)?;
        if waited {
            queue(pipeline.custom::<(), _>(exists(), vec![keys[1].clone()]).await)?;
        }
        natives.push(Native { at, keys, waited });
    }
    if natives.is_empty() {
        return lane.round(requests).await;
    }
    let rest: Vec<_> = (requests.iter().enumerate())
        .filter(|(at, _)| !natives.iter().any(|n| n.at == *at))
        .map(|(_, request)| *request)
        .collect();
    let round = async {
        if rest.is_empty() {
            Ok(Vec::new())
        } else {
            lane.round(&rest).await
        }
    };
    let (replies, rest_answers) = tokio::join!(pipeline.try_all::<Value>(), round);
    let mut answers = vec![0; requests.len()];
    for (at, answer) in (0..requests.len())
        .filter(|at| !natives.iter().any(|n| n.at == *at))
        .zip(rest_answers?)
    {
        answers[at] = answer;
    }
    let (fallback, announce) = read(lane.conn(), &natives, replies, &mut answers);
    let fallback_requests: Vec<_> = fallback.iter().map(|at| requests[*at]).collect();
    let again = async {
        if fallback_requests.is_empty() {
            Ok(Vec::new())
        } else {
            lane.round(&fallback_requests).await
        }
    };
    let (again, ()) = tokio::join!(again, announced(lane.conn(), &announce));
    for (at, answer) in fallback.iter().zip(again?) {
        answers[*at] = answer;
    }
    Ok(answers)
}

fn exists() -> CustomCommand {
    CustomCommand::new_static("EXISTS", ClusterHash::FirstKey, false)
}

/// A command buffered in a pipeline (which cannot fail there).
fn queue(buffered: Result<(), fred::error::Error>) -> Result<(), NodeError> {
    buffered.map_err(super::conn::failed)
}

/// The native replies, read into `answers`: the releases to send again by
/// `ROUND` (`DELIFEQ` found another string, or the server refused it), and
/// the keys of those deleted whose lock was waited for.
fn read<'a>(
    conn: &Conn,
    natives: &[Native<'a>],
    replies: Vec<Result<Value, fred::error::Error>>,
    answers: &mut [i64],
) -> (Vec<usize>, Vec<&'a [String; 4]>) {
    let (mut fallback, mut announce) = (Vec::new(), Vec::new());
    let mut replies = replies.into_iter();
    for native in natives {
        let deleted = replies.next();
        let waiting = if native.waited { replies.next() } else { None };
        match deleted {
            Some(Ok(Value::Integer(1))) => {
                answers[native.at] = 1;
                if matches!(waiting, Some(Ok(Value::Integer(1)))) {
                    announce.push(native.keys);
                }
            }
            Some(Ok(Value::Integer(0))) => fallback.push(native.at),
            other => {
                if let Some(Err(error)) = &other
                    && !super::conn::unanswered(error)
                {
                    // NOPERM, or a server that lost the command: by script
                    // until the next connection's probe.
                    conn.native_release.store(false, Ordering::SeqCst);
                    tracing::warn!(%error, "DELIFEQ refused; releasing by script until the next connection");
                }
                fallback.push(native.at);
            }
        }
    }
    (fallback, announce)
}

/// What `ROUND` does for a release announced if waited for, after the
/// delete: the mark goes, and the release is published on the channel of
/// the lock's bucket. A failure leaves the waiters to their retry delay.
async fn announced(conn: &Conn, keys: &[&[String; 4]]) {
    if keys.is_empty() {
        return;
    }
    // Standalone masters only: a plain `PUBLISH`.
    let publish = CustomCommand::new_static("PUBLISH", ClusterHash::FirstKey, false);
    let pipeline = conn.client.pipeline();
    for keys in keys {
        let del = CustomCommand::new_static("DEL", ClusterHash::FirstKey, false);
        let queued = async {
            pipeline.custom::<(), _>(del, vec![keys[1].clone()]).await?;
            pipeline
                .custom::<(), _>(publish.clone(), vec![released_channel(&keys[0]), keys[0].clone()])
                .await
        };
        if queued.await.is_err() {
            return;
        }
    }
    for reply in pipeline.try_all::<Value>().await {
        if let Err(error) = reply {
            tracing::debug!(%error, "a release's announcement failed");
        }
    }
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
