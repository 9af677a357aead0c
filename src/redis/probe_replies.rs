//! What the monitor's probe reads from a master (docs/design.md#quarantine):
//! the fence counter, the marker, `TIME`, `CONFIG GET` and `INFO`. Pure,
//! like `replies.rs` (and reached through it).

use std::time::Duration;

use fred::prelude::Value;

use super::replies::{counter, describe, optional_text, text, unsigned};
use crate::redlock::node::NodeError;

/// `GET <prefix>:fence`: the fence counter, `None` when the node has none.
///
/// # Errors
/// When the key holds anything but a non-negative integer.
pub fn fence(reply: Value) -> Result<Option<u64>, NodeError> {
    counter(reply, "fence counter")
}

/// `GET <prefix>:verified`: the marker (an identity), `None` when unset.
///
/// # Errors
/// When the reply is not a UTF-8 string or nil.
pub fn marker(reply: Value) -> Result<Option<String>, NodeError> {
    optional_text(reply, "verified marker")
}

/// `TIME`: `[seconds, microseconds]`, as microseconds since the epoch.
///
/// # Errors
/// Anything but two non-negative integers (microseconds below 1,000,000)
/// whose total fits in a `u64`.
pub fn time(reply: Value) -> Result<u64, NodeError> {
    let parts = match reply {
        Value::Array(parts) => parts,
        other => return Err(NodeError::Reply(format!("unexpected TIME reply: {}", describe(&other)))),
    };
    let [secs, micros] = <[Value; 2]>::try_from(parts).map_err(|parts| {
        NodeError::Reply(format!(
            "unexpected TIME reply: {} elements (expected seconds, microseconds)",
            parts.len()
        ))
    })?;
    let secs = unsigned(secs, "TIME seconds")?;
    let micros = unsigned(micros, "TIME microseconds")?;
    if micros >= 1_000_000 {
        return Err(NodeError::Reply(format!(
            "unexpected TIME reply: {micros} microseconds (expected below 1000000)"
        )));
    }
    secs.checked_mul(1_000_000)
        .and_then(|us| us.checked_add(micros))
        .ok_or_else(|| NodeError::Reply(format!("unexpected TIME reply: {secs} seconds is out of range")))
}

/// `CONFIG GET <name>`: the parameter's value; empty when the node does not
/// know the parameter. RESP2 sends name/value pairs in an array, RESP3 a map.
///
/// # Errors
/// When the reply is neither, or a name or value is not a UTF-8 string.
pub fn config_get(reply: Value, name: &str) -> Result<String, NodeError> {
    let what = "CONFIG GET reply";
    match reply {
        Value::Array(parts) => {
            if parts.len() % 2 != 0 {
                return Err(NodeError::Reply(format!(
                    "unexpected {what}: {} elements (expected name/value pairs)",
                    parts.len()
                )));
            }
            let mut parts = parts.into_iter();
            while let (Some(key), Some(value)) = (parts.next(), parts.next()) {
                let key = text(key, what)?;
                let value = text(value, what)?;
                if key.eq_ignore_ascii_case(name) {
                    return Ok(value);
                }
            }
            Ok(String::new())
        }
        Value::Map(map) => {
            for (key, value) in map.inner() {
                let key = key
                    .into_string()
                    .ok_or_else(|| NodeError::Reply(format!("unexpected {what}: a name is not UTF-8")))?;
                let value = text(value, what)?;
                if key.eq_ignore_ascii_case(name) {
                    return Ok(value);
                }
            }
            Ok(String::new())
        }
        Value::Null => Ok(String::new()),
        other => Err(NodeError::Reply(format!("unexpected {what}: {}", describe(&other)))),
    }
}

/// The fields of `INFO` the probe looks at. A field the reply lacks is empty
/// (an uptime that is missing or not a number is zero): the health rules then
/// refuse or quarantine the node rather than trust it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Info {
    /// `role`: `master` on a usable node.
    pub role: String,
    /// `run_id`: changes when the process restarts.
    pub run_id: String,
    /// `master_replid`: changes on failover.
    pub master_replid: String,
    /// `uptime_in_seconds`.
    pub uptime: Duration,
    /// The major version of `redis_version` (Valkey reports 7.2.4 there).
    pub major_version: u32,
}

/// `INFO`: the text, read by [`info_text`].
///
/// # Errors
/// When the reply is not a UTF-8 string.
pub fn info(reply: Value) -> Result<Info, NodeError> {
    Ok(info_text(&text(reply, "INFO reply")?))
}

/// The probe's fields from `INFO` text (`name:value` lines, `# Section`
/// headers, CRLF or LF line ends). The first line naming a field wins.
pub fn info_text(info: &str) -> Info {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    Info {
        role: field("role"),
        run_id: field("run_id"),
        master_replid: field("master_replid"),
        uptime: Duration::from_secs(field("uptime_in_seconds").parse().unwrap_or(0)),
        major_version: field("redis_version")
            .split('.')
            .next()
            .and_then(|major| major.parse().ok())
            .unwrap_or(0),
    }
}
