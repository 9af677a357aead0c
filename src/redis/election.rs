//! An election's record on one master (docs/design.md#elections): written
//! only while the election's lock holds the writer's value, read together
//! with the lock in one step (`lua/write_record.lua`, `lua/read_record.lua`).

use std::time::Duration;

use fred::prelude::Value;

use super::conn::{Conn, ttl_arg};
use super::replies;
use super::scripts::{SCRIPTS, released_channel};
use crate::redlock::node::{NodeError, RecordView};

/// Writes an election's record while its lock holds `value`.
pub(super) async fn write_record(
    conn: &Conn,
    key: &str,
    record_key: &str,
    value: &str,
    record: &[u8],
    ttl: Duration,
) -> Result<bool, NodeError> {
    let args = vec![
        Value::from(value),
        Value::Bytes(record.to_vec().into()),
        ttl_arg(ttl),
        Value::from(released_channel(key)),
        conn.publish(),
    ];
    replies::flag(conn.eval(&SCRIPTS.write_record, vec![key, record_key], args).await?)
}

/// An election's lock and record, read together.
pub(super) async fn read_record(conn: &Conn, key: &str, record_key: &str) -> Result<RecordView, NodeError> {
    let reply = conn
        .eval(&SCRIPTS.read_record, vec![key, record_key], Vec::new())
        .await?;
    record_view(reply)
}

/// The lock's value and grant time, and the record, from READ_RECORD's
/// reply. A lock key holds `value\ncounter\ngranted_ms\n…`
/// (docs/design.md#who-holds-it); a shared lock's mark is no value.
fn record_view(reply: Value) -> Result<RecordView, NodeError> {
    let Value::Array(mut both) = reply else {
        return Err(NodeError::Reply(format!("READ_RECORD answered {reply:?}")));
    };
    if both.len() != 2 {
        return Err(NodeError::Reply(format!("READ_RECORD answered {} values", both.len())));
    }
    let record = bytes_of(both.pop().unwrap_or(Value::Null))?;
    let lock = bytes_of(both.pop().unwrap_or(Value::Null))?;
    let mut view = RecordView {
        record,
        ..RecordView::default()
    };
    if let Some(lock) = lock.filter(|l| !l.starts_with(b"\t")) {
        let text = String::from_utf8_lossy(&lock);
        let mut fields = text.split('\n');
        view.value = fields.next().map(str::to_owned);
        view.granted_ms = fields.nth(1).and_then(|ms| ms.parse().ok());
    }
    Ok(view)
}

fn bytes_of(value: Value) -> Result<Option<Vec<u8>>, NodeError> {
    match value {
        Value::Null => Ok(None),
        Value::Bytes(b) => Ok(Some(b.to_vec())),
        Value::String(s) => Ok(Some(s.as_bytes().to_vec())),
        other => Err(NodeError::Reply(format!("READ_RECORD answered {other:?}"))),
    }
}

#[cfg(test)]
#[path = "election_tests.rs"]
mod tests;
