//! `redlockctl leader`, `observe` and `watch`: who leads an election, and
//! one line per change of an election or a lock (docs/design.md#observe-and-watch).
//!
//! Lines are `key=value` fields (strings quoted), or with `--json` one JSON
//! object per line, terms and fencing tokens as decimal strings (exact above
//! 2^53) and values as UTF-8 text (invalid bytes replaced). Exit codes:
//! `leader` 0 when someone leads, 1 when nobody does; `observe` and `watch`
//! run until interrupted, or exit 2 when the stream fails.

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use redlockd_client::proto::{Holder, WatchEvent, WatchResponse};
use redlockd_client::{Client, Error, Leader};

/// `redlockctl leader NAME`
#[derive(clap::Args)]
pub struct LeaderArgs {
    /// The election.
    name: String,
    /// One JSON object instead of key=value fields.
    #[arg(long)]
    json: bool,
}

/// `redlockctl observe NAME`
#[derive(clap::Args)]
pub struct ObserveArgs {
    /// The election to follow.
    name: String,
    /// One JSON object per line instead of key=value fields.
    #[arg(long)]
    json: bool,
}

/// `redlockctl watch RESOURCE`
#[derive(clap::Args)]
pub struct WatchArgs {
    /// The lock to follow.
    resource: String,
    /// One JSON object per line instead of key=value fields.
    #[arg(long)]
    json: bool,
}

pub async fn leader(client: Client, args: LeaderArgs) -> ExitCode {
    match client.leader(&args.name).await {
        Ok(leader) => {
            out!("{}", leader_line(leader.as_ref(), args.json));
            ExitCode::from(if leader.is_some() { 0 } else { 1 })
        }
        Err(error) => failed(&error),
    }
}

pub async fn observe(client: Client, args: ObserveArgs) -> ExitCode {
    let mut states = match client.observe(&args.name).await {
        Ok(states) => states,
        Err(error) => return failed(&error),
    };
    while let Some(state) = states.next().await {
        match state {
            Ok(leader) => out!("{}", leader_line(leader.as_ref(), args.json)),
            Err(error) => return failed(&error),
        }
    }
    say!("the daemon ended the stream");
    ExitCode::from(2)
}

pub async fn watch(client: Client, args: WatchArgs) -> ExitCode {
    let mut changes = match client.watch(&args.resource).await {
        Ok(changes) => changes,
        Err(error) => return failed(&error),
    };
    while let Some(change) = changes.next().await {
        match change {
            Ok(change) => out!("{}", watch_line(&change, args.json)),
            Err(error) => return failed(&error),
        }
    }
    say!("the daemon ended the stream");
    ExitCode::from(2)
}

fn failed(error: &Error) -> ExitCode {
    say!("{error}");
    ExitCode::from(2)
}

/// A line's fields: a name and its value, already written out.
struct Line {
    json: bool,
    fields: Vec<String>,
}

impl Line {
    fn new(json: bool) -> Line {
        Line {
            json,
            fields: Vec::new(),
        }
    }

    /// A string: quoted in both forms.
    fn text(mut self, key: &str, value: &str) -> Line {
        let value = if self.json {
            json_string(value)
        } else {
            format!("{value:?}")
        };
        self.fields.push(self.field(key, &value));
        self
    }

    /// A number, a boolean or a word, as it is; `quoted` ones (terms and
    /// tokens, to stay exact; words) are JSON strings.
    fn plain(mut self, key: &str, value: impl ToString, quoted: bool) -> Line {
        let value = value.to_string();
        let value = if self.json && quoted {
            format!("\"{value}\"")
        } else {
            value
        };
        self.fields.push(self.field(key, &value));
        self
    }

    fn field(&self, key: &str, value: &str) -> String {
        if self.json {
            format!("\"{key}\":{value}")
        } else {
            format!("{key}={value}")
        }
    }

    fn done(self) -> String {
        if self.json {
            format!("{{{}}}", self.fields.join(","))
        } else {
            self.fields.join(" ")
        }
    }
}

fn leader_line(leader: Option<&Leader>, json: bool) -> String {
    let line = Line::new(json).plain("elected", leader.is_some(), false);
    let Some(leader) = leader else {
        return line.done();
    };
    let since_ms = leader
        .since
        .and_then(|since| since.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_millis());
    line.text("candidate", &leader.candidate)
        .plain("term", leader.term, true)
        .text("value", &String::from_utf8_lossy(&leader.value))
        .plain("since_ms", since_ms, false)
        .done()
}

fn watch_line(change: &WatchResponse, json: bool) -> String {
    let event = match change.event() {
        WatchEvent::Current => "current",
        WatchEvent::Acquired => "acquired",
        WatchEvent::Released => "released",
        WatchEvent::Expired => "expired",
        WatchEvent::ForceReleased => "force_released",
        WatchEvent::Changed => "changed",
        WatchEvent::Unspecified => "unspecified",
    };
    let mut line = Line::new(json)
        .plain("event", event, true)
        .plain("held", change.held, false);
    if let Some(holder) = &change.holder {
        line = holder_fields(line, holder);
    }
    line.plain("readers", change.readers, false)
        .plain("permits", change.permits, false)
        .plain("permits_out", change.permits_out, false)
        .done()
}

fn holder_fields(line: Line, holder: &Holder) -> Line {
    let since_ms = holder
        .since
        .as_ref()
        .map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000);
    let ttl_ms = (holder.ttl)
        .and_then(|ttl| Duration::try_from(ttl).ok())
        .unwrap_or_default()
        .as_millis();
    line.text("owner", &holder.owner)
        .text("tenant", &holder.tenant)
        .text("daemon", &holder.daemon)
        .plain("since_ms", since_ms, false)
        .plain("fencing_token", holder.fencing_token, true)
        .plain("ttl_ms", ttl_ms, false)
}

/// `s` as a JSON string.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
