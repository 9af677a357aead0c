//! Sessions over HTTP against a real daemon and five masters
//! (docs/http.md#held-while-the-response-is-open): a lock held while the
//! response is open and released when the client closes it, LOST when three
//! masters die, a campaign observers see, what is refused before the
//! stream, and a daemon that stops.

use std::time::Duration;

use fred::prelude::KeysInterface;
use serde_json::Value;
use tokio::time::Instant;

use crate::support::http_lines::{Connection, Protocol, next_result, seconds};
use crate::support::{Cluster, Daemon, must_acquire, release, test_env, try_acquire};

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
    let acquired = next_result(&mut held).await;
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
    let acquired = next_result(&mut held).await;
    assert_eq!(acquired["event"], "HOLD_EVENT_ACQUIRED");
    // Until when the last lease line read said the lock is valid.
    let valid_until = |event: &Value| Instant::now() + seconds(&event["lease"]["validity"]);
    let mut valid = valid_until(&acquired);
    let killed = Instant::now();
    for i in 0..3 {
        cluster.kill(i);
    }
    let lost = loop {
        let event = next_result(&mut held).await;
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
async fn a_campaign_leads_while_its_response_is_open_and_observers_see_it() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut watcher = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut observed = watcher.send("GET", "/v1/elections/http/jobs:observe", "", None).await;
    observed.expect_status(200).await;
    assert_eq!(next_result(&mut observed).await["elected"], false);

    // "aHR0cDovL2E=" is base64 for "http://a".
    let start = r#"{"candidate":"pod-a","value":"aHR0cDovL2E=","ttl":"1s"}"#;
    let mut a = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut leading = a.send("POST", "/v1/elections/http/jobs:campaign", start, None).await;
    leading.expect_status(200).await;
    let elected = next_result(&mut leading).await;
    assert_eq!(elected["event"], "CAMPAIGN_EVENT_ELECTED", "{elected}");
    assert_eq!(elected["value"], "aHR0cDovL2E=");
    let term = elected["term"].as_str().expect("the term as a string").to_owned();
    let leader = next_result(&mut observed).await;
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
        let event = next_result(&mut waiting).await;
        if event["event"] == "CAMPAIGN_EVENT_ELECTED" {
            break event;
        }
    };
    let next_term: u64 = next["term"].as_str().unwrap().parse().unwrap();
    assert!(next_term > term.parse::<u64>().unwrap(), "{next} after {term}");
    let seen = loop {
        let state = next_result(&mut observed).await;
        if state["candidate"] == "pod-b" {
            break state;
        }
    };
    assert_eq!(seen["term"], next["term"]);
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
    assert_eq!(next_result(&mut held).await["event"], "HOLD_EVENT_ACQUIRED");
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
    assert_eq!(next_result(&mut again).await["event"], "HOLD_EVENT_ACQUIRED");
    daemon.stop().await;
}

#[tokio::test]
async fn a_daemon_that_stops_releases_an_http_session_and_says_so() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let mut held = http
        .send("POST", "/v1/locks/http/stopping:hold", r#"{"ttl":"2s"}"#, None)
        .await;
    held.expect_status(200).await;
    assert_eq!(next_result(&mut held).await["event"], "HOLD_EVENT_ACQUIRED");
    let admin = cluster.admin(0).await;
    let key = crate::support::keys::of("http/stopping");
    let before: Option<String> = admin.get(&key).await.unwrap();
    assert!(before.is_some(), "no lock key on master 0 while held");
    let stopping = tokio::spawn(daemon.stop());
    let released = loop {
        let event = next_result(&mut held).await;
        if event["event"] != "HOLD_EVENT_EXTENDED" {
            break event;
        }
    };
    assert_eq!(released["event"], "HOLD_EVENT_RELEASED", "{released}");
    assert_eq!(released["heldToEnd"], true, "{released}");
    assert!(
        released["reason"].as_str().unwrap().contains("shutting down"),
        "{released}"
    );
    assert_eq!(
        held.next_within(Duration::from_secs(5)).await,
        None,
        "the stream ends with RELEASED"
    );
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the daemon stopped")
        .unwrap();
    let after: Option<String> = admin.get(&key).await.unwrap();
    assert_eq!(after, None, "the lock's key is still on master 0 after the stop");
}

#[tokio::test]
async fn a_client_that_leaves_while_waiting_is_no_longer_a_waiter() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut grpc = daemon.client().await;
    let lease = must_acquire(&mut grpc, "http/waited", 5.0, 0.0).await;
    let mut http = Connection::open(daemon.addr, Protocol::Http1).await;
    let waiting = http
        .send(
            "POST",
            "/v1/locks/http/waited:hold",
            r#"{"ttl":"1s","wait":"10s"}"#,
            None,
        )
        .await;
    assert_eq!(waiting.status, 200);
    daemon.until_waiters(1).await;
    // The client leaves before its turn: its wait ends with it, so the
    // lock released next is free, not handed to a client that is gone.
    drop(waiting);
    http.close();
    daemon.until_waiters(0).await;
    assert!(release(&mut grpc, &lease).await);
    let next = try_acquire(&mut grpc, "http/waited", 1.0, 0.0).await;
    assert!(
        next.acquired,
        "the released lock went to the client that left: {next:?}"
    );
    daemon.stop().await;
}
