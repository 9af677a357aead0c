//! The HTTP stream routes against a real daemon over real HTTP
//! (docs/http.md#streams): a lock held while the response is open and
//! released when the client closes it, LOST when three masters die, tokens
//! above 2^53 exact as strings, Server-Sent Events framing and heartbeats,
//! and a client that stops reading.

use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface};
use serde_json::Value;
use tokio::time::Instant;

use crate::support::http_lines::{Connection, Protocol};
use crate::support::{Cluster, Daemon, test_env, try_acquire};

/// The first line of `body`'s stream, parsed; panics after 10 s.
async fn result(stream: &mut crate::support::http_lines::Lines) -> Value {
    let line = stream.next_within(Duration::from_secs(10)).await.expect("a line");
    let json: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    json.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("not a result: {line}"))
}

/// A proto3 JSON duration ("0.9s").
fn seconds(duration: &Value) -> Duration {
    let text = duration
        .as_str()
        .unwrap_or_else(|| panic!("not a duration: {duration}"));
    Duration::from_secs_f64(
        text.trim_end_matches('s')
            .parse()
            .unwrap_or_else(|e| panic!("{text}: {e}")),
    )
}

#[tokio::test]
async fn a_held_lock_is_released_when_the_client_closes_the_response() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut held = http
        .send(
            "POST",
            "/v1/locks/http/closed:hold",
            r#"{"ttl":"2s","owner":"curl"}"#,
            None,
        )
        .await;
    held.expect_status(200).await;
    assert_eq!(held.content_type, "application/x-ndjson");
    let acquired = result(&mut held).await;
    assert_eq!(acquired["event"], "HOLD_EVENT_ACQUIRED", "{acquired}");
    assert!(acquired["lease"]["fencingToken"].is_string(), "{acquired}");
    let mut grpc = daemon.client().await;
    assert!(
        !try_acquire(&mut grpc, "http/closed", 1.0, 0.0).await.acquired,
        "taken while the response was open"
    );
    // The lease lives 2 s and the session would extend it: a grant within
    // a 1.5 s wait means the daemon released it when the client left.
    drop(held);
    http.close();
    let closed = Instant::now();
    let after = try_acquire(&mut grpc, "http/closed", 1.0, 1.5).await;
    println!("acquired {:?} after the client closed its response", closed.elapsed());
    assert!(after.acquired, "still held after the client closed: {after:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn a_held_lock_is_lost_when_three_masters_die() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut held = http
        .send("POST", "/v1/locks/http/lost:hold", r#"{"ttl":"1s"}"#, None)
        .await;
    held.expect_status(200).await;
    let acquired = result(&mut held).await;
    assert_eq!(acquired["event"], "HOLD_EVENT_ACQUIRED");
    // Until when the last lease line read said the lock is valid.
    let valid_until = |event: &Value| Instant::now() + seconds(&event["lease"]["validity"]);
    let mut valid = valid_until(&acquired);
    let killed = Instant::now();
    for i in 0..3 {
        cluster.kill(i);
    }
    let lost = loop {
        let event = result(&mut held).await;
        match event["event"].as_str() {
            Some("HOLD_EVENT_EXTENDED") => valid = valid_until(&event),
            Some("HOLD_EVENT_LOST") => break event,
            _ => panic!("neither EXTENDED nor LOST: {event}"),
        }
    };
    println!("LOST {:?} after three masters died: {lost}", killed.elapsed());
    assert!(
        Instant::now() < valid,
        "LOST came after the validity the client was given ran out"
    );
    assert!(!lost["reason"].as_str().unwrap_or("").is_empty(), "{lost}");
    assert_eq!(
        held.next_within(Duration::from_secs(5)).await,
        None,
        "the stream ends with LOST"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn fencing_tokens_above_two_to_the_53_are_exact_strings() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // As tests/it/client.rs: the next token is (counter + 1) * 16 + the
    // index of a master, above 2^53 (where a double holds only even
    // integers).
    let counter: u64 = (1 << 53) / 16 + 12_345;
    for i in 0..5 {
        let admin = cluster.admin(i).await;
        let _: () = admin
            .set(crate::support::keys::fence("lock:http/big"), counter, None, None, false)
            .await
            .unwrap();
        let _ = admin.quit().await;
    }
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
async fn a_campaign_leads_while_its_response_is_open_and_observers_see_it() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut watcher = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut observed = watcher.send("GET", "/v1/elections/http/jobs:observe", "", None).await;
    observed.expect_status(200).await;
    assert_eq!(result(&mut observed).await["elected"], false);

    // "aHR0cDovL2E=" is base64 for "http://a".
    let start = r#"{"candidate":"pod-a","value":"aHR0cDovL2E=","ttl":"1s"}"#;
    let mut a = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut leading = a.send("POST", "/v1/elections/http/jobs:campaign", start, None).await;
    leading.expect_status(200).await;
    let elected = result(&mut leading).await;
    assert_eq!(elected["event"], "CAMPAIGN_EVENT_ELECTED", "{elected}");
    assert_eq!(elected["value"], "aHR0cDovL2E=");
    let term = elected["term"].as_str().expect("the term as a string").to_owned();
    let leader = result(&mut observed).await;
    assert_eq!(
        (&leader["candidate"], &leader["term"]),
        (&Value::from("pod-a"), &Value::from(term.clone()))
    );

    // A second candidate waits; the first closes its response, and the
    // second is elected with a higher term.
    let mut b = Connection::open(daemon.addr, Protocol::Http1).await;
    let start_b = r#"{"candidate":"pod-b","ttl":"1s"}"#;
    let mut waiting = b.send("POST", "/v1/elections/http/jobs:campaign", start_b, None).await;
    waiting.expect_status(200).await;
    drop(leading);
    a.close();
    let next = loop {
        let event = result(&mut waiting).await;
        if event["event"] == "CAMPAIGN_EVENT_ELECTED" {
            break event;
        }
    };
    let next_term: u64 = next["term"].as_str().unwrap().parse().unwrap();
    assert!(next_term > term.parse::<u64>().unwrap(), "{next} after {term}");
    let seen = loop {
        let state = result(&mut observed).await;
        if state["candidate"] == "pod-b" {
            break state;
        }
    };
    assert_eq!(seen["term"], next["term"]);
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
    assert_eq!(result(&mut ndjson).await["event"], "WATCH_EVENT_CURRENT");
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
    assert_eq!(result(&mut held).await["event"], "HOLD_EVENT_ACQUIRED");
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
        let event = result(&mut held).await;
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

#[tokio::test]
async fn a_session_is_refused_before_its_stream_as_on_grpc() {
    const TOKEN: &str = "gamma-token-0123456789abcdef0123";
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tenants.toml");
    let tenants = format!(
        "[[tenant]]\nname = \"gamma\"\ntoken = \"{TOKEN}\"\nprefixes = [\"http/\"]\n\n\
         [tenant.quota]\nmax_sessions = 1\n"
    );
    std::fs::write(&file, tenants).unwrap();
    let mut env = test_env(&cluster);
    env.insert(
        "REDLOCKD__AUTH__TOKENS_FILE".into(),
        file.to_string_lossy().into_owned(),
    );
    let daemon = Daemon::start_with(env).await;
    let hold = r#"{"ttl":"1s"}"#;

    let mut anonymous = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut refused = anonymous.send("POST", "/v1/locks/http/a:hold", hold, None).await;
    refused.expect_status(401).await;
    let status: Value = serde_json::from_str(&refused.rest().await).unwrap();
    assert_eq!(status["code"], 16, "{status}");

    let mut gamma = Connection::open(daemon.addr, Protocol::Http1).await.with_token(TOKEN);
    let mut outside = gamma.send("POST", "/v1/locks/orders/1:hold", hold, None).await;
    outside.expect_status(403).await;
    let status: Value = serde_json::from_str(&outside.rest().await).unwrap();
    assert!(status["message"].as_str().unwrap().contains("http/"), "{status}");

    // One session at a time for gamma: a second is refused with the quota
    // named, and taken once the first closed.
    let mut first = Connection::open(daemon.addr, Protocol::Http1).await.with_token(TOKEN);
    let mut held = first.send("POST", "/v1/locks/http/a:hold", hold, None).await;
    held.expect_status(200).await;
    assert_eq!(result(&mut held).await["event"], "HOLD_EVENT_ACQUIRED");
    let mut second = gamma.send("POST", "/v1/locks/http/b:hold", hold, None).await;
    second.expect_status(429).await;
    let status: Value = serde_json::from_str(&second.rest().await).unwrap();
    assert_eq!(
        status["details"][0]["@type"], "type.googleapis.com/google.rpc.QuotaFailure",
        "{status}"
    );
    assert_eq!(
        status["details"][0]["violations"][0]["quotaId"], "max_sessions",
        "{status}"
    );
    drop(held);
    first.close();
    let mut taken = None;
    for _ in 0..50 {
        let mut again = gamma.send("POST", "/v1/locks/http/b:hold", hold, None).await;
        if again.status == 200 {
            taken = Some(again);
            break;
        }
        again.rest().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut again = taken.expect("the session quota was still used up after the first session closed");
    assert_eq!(result(&mut again).await["event"], "HOLD_EVENT_ACQUIRED");
    daemon.stop().await;
}
