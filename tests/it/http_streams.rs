//! The HTTP stream routes against a real daemon over real HTTP
//! (docs/http.md#streams): tokens above 2^53 exact as strings, Server-Sent
//! Events framing and heartbeats, and a client that stops reading. The
//! sessions themselves are in `http_sessions.rs`.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::support::http_lines::{Connection, Protocol, next_result};
use crate::support::{Cluster, Daemon, try_acquire};

#[tokio::test]
async fn fencing_tokens_above_two_to_the_53_are_exact_strings() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // As tests/it/client.rs: the next token is (counter + 1) * 16 + the
    // index of a master, above 2^53 (where a double holds only even
    // integers).
    let counter: u64 = (1 << 53) / 16 + 12_345;
    cluster.set_fence("http/big", counter).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut held = http
        .send("POST", "/v1/locks/http/big:hold", r#"{"ttl":"1s"}"#, None)
        .await;
    let line = held.next_within(Duration::from_secs(10)).await.expect("ACQUIRED");
    let json: Value = serde_json::from_str(&line).unwrap();
    let token = json["result"]["lease"]["fencingToken"]
        .as_str()
        .unwrap_or_else(|| panic!("the token is not a string: {line}"));
    let exact: u64 = token.parse().expect("decimal digits");
    assert_eq!(exact / 16, counter + 1, "{token}");
    assert!(exact > 1 << 53);
    assert!(line.contains(&format!("\"fencingToken\":\"{exact}\"")), "{line}");
    daemon.stop().await;
}

#[tokio::test]
async fn server_sent_events_frame_the_same_messages() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let events = Some("text/event-stream");
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut watched = http.send("GET", "/v1/locks/http/sse:watch", "", events).await;
    watched.expect_status(200).await;
    assert_eq!(watched.content_type, "text/event-stream");
    let current = watched.next_event().await;
    assert_eq!(current.0, "result");
    assert_eq!(current.1["event"], "WATCH_EVENT_CURRENT", "{current:?}");
    assert_eq!(current.1["held"], false);

    let mut holder = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut held = holder
        .send(
            "POST",
            "/v1/locks/http/sse:hold",
            r#"{"ttl":"1s","owner":"browser"}"#,
            events,
        )
        .await;
    assert_eq!(held.content_type, "text/event-stream");
    let (kind, acquired) = held.next_event().await;
    assert_eq!(
        (kind.as_str(), &acquired["event"]),
        ("result", &Value::from("HOLD_EVENT_ACQUIRED"))
    );
    let (kind, seen) = watched.next_event().await;
    assert_eq!(kind, "result");
    assert_eq!(seen["event"], "WATCH_EVENT_ACQUIRED", "{seen}");
    assert_eq!(seen["holder"]["owner"], "browser", "{seen}");

    // An error after the stream began is the last event: a hold on a
    // resource taken, with no wait, is NOT_ACQUIRED (a result); a field
    // out of range is refused before the stream, with a status.
    let mut other = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut refused = other
        .send("POST", "/v1/locks/http/sse:hold", r#"{"ttl":"1s"}"#, events)
        .await;
    let (kind, not_acquired) = refused.next_event().await;
    assert_eq!(
        (kind.as_str(), &not_acquired["event"]),
        ("result", &Value::from("HOLD_EVENT_NOT_ACQUIRED"))
    );
    assert_eq!(refused.next_within(Duration::from_secs(5)).await, None);
    let mut bad = other
        .send("POST", "/v1/locks/http/sse:hold", r#"{"ttl":"1ms"}"#, events)
        .await;
    assert_eq!(bad.status, 400);
    let status: Value = serde_json::from_str(&bad.rest().await).unwrap();
    assert!(status["message"].as_str().unwrap().starts_with("ttl"), "{status}");
    daemon.stop().await;
}

#[tokio::test]
async fn a_quiet_stream_sends_a_heartbeat_every_15_seconds() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut ndjson = http.send("GET", "/v1/locks/http/quiet:watch", "", None).await;
    let mut sse = Connection::open(daemon.addr, Protocol::Http1)
        .await
        .send("GET", "/v1/locks/http/quiet:watch", "", Some("text/event-stream"))
        .await;
    assert_eq!(next_result(&mut ndjson).await["event"], "WATCH_EVENT_CURRENT");
    assert_eq!(sse.next_event().await.0, "result");
    let started = Instant::now();
    let line = ndjson.next_within(Duration::from_secs(20)).await;
    assert_eq!(line.as_deref(), Some(r#"{"heartbeat":{}}"#));
    let waited = started.elapsed();
    println!("an NDJSON heartbeat after {waited:?}");
    assert!(
        waited > Duration::from_secs(13) && waited < Duration::from_secs(17),
        "{waited:?}"
    );
    assert_eq!(
        sse.next_within(Duration::from_secs(5)).await.as_deref(),
        Some(": heartbeat")
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_client_that_stops_reading_loses_its_lock_and_the_daemon_keeps_little() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // HTTP/2 with a 1,000-byte window: the daemon may send that much
    // before this client reads (over HTTP/1.1 the kernel's socket buffers,
    // megabytes, come first; docs/http.md#slow-readers).
    let mut http = Connection::open(daemon.addr, Protocol::Http2 { window: 1_000 }).await;
    let mut held = http
        .send("POST", "/v1/locks/http/slow:hold", r#"{"ttl":"0.8s"}"#, None)
        .await;
    held.expect_status(200).await;
    assert_eq!(next_result(&mut held).await["event"], "HOLD_EVENT_ACQUIRED");
    // Not reading now: extensions every ~270 ms fill the window, then the
    // daemon's 8 waiting events; the next one ends the session.
    let stopped = Instant::now();
    let mut grpc = daemon.client().await;
    let mut released = None;
    while stopped.elapsed() < Duration::from_secs(15) {
        if try_acquire(&mut grpc, "http/slow", 1.0, 0.5).await.acquired {
            released = Some(stopped.elapsed());
            break;
        }
    }
    let released = released.expect("the lock of a client that stopped reading was still held after 15 s");
    println!("released {released:?} after the client stopped reading");
    // What the client reads when it comes back: the extensions the window
    // took, then LOST, and the end.
    let mut extended = 0;
    let lost = loop {
        let event = next_result(&mut held).await;
        match event["event"].as_str() {
            Some("HOLD_EVENT_EXTENDED") => extended += 1,
            Some("HOLD_EVENT_LOST") => break event,
            _ => panic!("neither EXTENDED nor LOST: {event}"),
        }
    };
    println!("read {extended} EXTENDED, then {lost}");
    assert!(lost["reason"].as_str().unwrap().contains("stopped reading"), "{lost}");
    // What a 1,000-byte window takes (lines of about 230 bytes), and no more.
    assert!(extended <= 5, "{extended} EXTENDED waited for a reader that stopped");
    assert_eq!(
        held.next_within(Duration::from_secs(5)).await,
        None,
        "the stream ends with LOST"
    );
    daemon.stop().await;
}
