//! The status page on the metrics listener (docs/operations.md#status-page):
//! off by default; with tenants, its data only for the `admin` scope and
//! only in that tenant's namespace; its HTML, script and style embedded; the
//! masters' standing (a killed master unusable, and why), the locks with
//! their tokens and this daemon's waiters, the elections' leaders, the
//! rates, and a lock followed over Server-Sent Events.

use std::time::Duration;

use redlockd_client::proto::AcquireRequest;
use serde_json::Value;

use crate::support::http::Client;
use crate::support::http_lines::{Connection, Protocol};
use crate::support::tenants::{ALPHA, BETA, acquire, authed, tenants_env};
use crate::support::{Cluster, Daemon, must_acquire, test_env};

const ON: (&str, &str) = ("REDLOCKD__STATUS_PAGE__ENABLED", "true");

async fn page_daemon(cluster: &Cluster) -> Daemon {
    let mut env = test_env(cluster);
    env.insert(ON.0.into(), ON.1.into());
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(5).await;
    daemon
}

/// `GET path` on the metrics listener as JSON, expecting 200.
async fn json(daemon: &Daemon, path: &str) -> Value {
    let reply = Client::connect(daemon.metrics_addr).await.get(path).await;
    assert_eq!(reply.status, 200, "{path}: {}", String::from_utf8_lossy(&reply.body));
    assert_eq!(reply.headers["cache-control"], "no-store");
    reply.json()
}

/// `path` until `done` holds of its JSON (10 s at most).
async fn json_until(daemon: &Daemon, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        let view = json(daemon, path).await;
        if done(&view) {
            return view;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} never showed what was wanted: {}", json(daemon, path).await);
}

#[tokio::test]
async fn the_status_page_is_off_by_default() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Client::connect(daemon.metrics_addr).await;
    for path in [
        "/status",
        "/status/page.js",
        "/status/api/masters",
        "/status/api/locks?prefix=a",
    ] {
        let reply = http.get(path).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(&reply.body[..], b"try /metrics\n", "{path}");
    }
    assert!(daemon.scrape().await.contains("redlock_acquire_total"));
}

#[tokio::test]
async fn with_tenants_its_data_needs_the_admin_scope_and_stays_in_the_tenants_namespace() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let mut env = tenants_env(&cluster, dir.path(), "");
    env.insert(ON.0.into(), ON.1.into());
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(5).await;
    let at = daemon.metrics_addr;

    // The page itself holds no data: it loads, and asks for a token.
    let page = Client::connect(at).await.get("/status").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert!(
        page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'")
    );
    let html = String::from_utf8_lossy(&page.body);
    assert!(
        html.contains("<title>redlockd status</title>") && html.contains("/status/page.js"),
        "{html}"
    );

    let anonymous = Client::connect(at).await.get("/status/api/masters").await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.message());
    assert_eq!(anonymous.headers["www-authenticate"], "Bearer");
    let wrong = Client::connect(at)
        .await
        .with_token("not-a-token")
        .get("/status/api/locks")
        .await;
    assert_eq!(wrong.status, 401, "{}", wrong.message());
    let not_admin = (Client::connect(at).await.with_token(BETA))
        .get("/status/api/locks?prefix=orders/")
        .await;
    assert_eq!(not_admin.status, 403);
    assert!(
        not_admin.message().contains("\"admin\" scope"),
        "{}",
        not_admin.message()
    );
    let stream = (Connection::open(at, Protocol::Http1).await.with_token(BETA))
        .send(
            "GET",
            "/status/api/watch?resource=orders/1",
            "",
            Some("text/event-stream"),
        )
        .await;
    assert_eq!(stream.status, 403);

    // alpha (admin) sees its own lock, not beta's of the same name.
    let mut client = daemon.client().await;
    let mine = client
        .acquire(authed(acquire("orders/1", 30_000, "a"), ALPHA))
        .await
        .unwrap();
    let token = mine.into_inner().lease.unwrap().fencing_token;
    client
        .acquire(authed(acquire("orders/1", 30_000, "b"), BETA))
        .await
        .unwrap();
    client
        .acquire(authed(acquire("orders/2", 30_000, "b"), BETA))
        .await
        .unwrap();
    let admin = Client::connect(at)
        .await
        .with_token(ALPHA)
        .get("/status/api/locks?prefix=orders/")
        .await;
    assert_eq!(admin.status, 200, "{}", admin.message());
    let locks = admin.json()["locks"].as_array().unwrap().clone();
    assert_eq!(locks.len(), 1, "{locks:?}");
    assert_eq!(locks[0]["resource"], "orders/1");
    assert_eq!(locks[0]["holder"]["owner"], "a");
    assert_eq!(locks[0]["holder"]["tenant"], "alpha");
    let shown: u64 = locks[0]["holder"]["fencingToken"].as_str().unwrap().parse().unwrap();
    assert!(shown >= token, "the holder's token {shown}, the lease's {token}");
}

#[tokio::test]
async fn the_page_shows_masters_locks_waiters_elections_rates_and_follows_a_lock() {
    let mut cluster = Cluster::start(5);
    let daemon = page_daemon(&cluster).await;
    let mut http = Client::connect(daemon.metrics_addr).await;
    for (path, content_type, holds) in [
        ("/status/page.js", "text/javascript; charset=utf-8", "/status/api/"),
        ("/status/page.css", "text/css; charset=utf-8", ".standing-unusable"),
    ] {
        let reply = http.get(path).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.headers["content-type"], content_type, "{path}");
        assert!(String::from_utf8_lossy(&reply.body).contains(holds), "{path}");
    }
    assert_eq!(http.post("/status/api/masters", "{}").await.status, 405);
    assert_eq!(http.get("/status/api/nothing").await.status, 404);
    let bad = http.get("/status/api/locks?prefix=a&page_token=forged").await;
    assert_eq!(bad.status, 400, "{}", bad.message());

    let masters = json(&daemon, "/status/api/masters").await;
    assert_eq!(masters["quorum"], 3);
    assert_eq!(masters["usable"], 5);
    assert!(
        masters["masters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["standing"] == "usable")
    );

    // A lock, and a waiter for it in this daemon's queue.
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "orders/42", 30.0, 0.0).await;
    let mut waiter = daemon.client().await;
    let waiting = tokio::spawn(async move {
        let request = AcquireRequest {
            owner: "bob".into(),
            ..crate::support::acquire_req("orders/42", 30.0, 30.0)
        };
        waiter.acquire(request).await
    });
    daemon.until_waiters(1).await;
    let locks = json(&daemon, "/status/api/locks?prefix=orders/").await;
    let lock = &locks["locks"][0];
    assert_eq!(lock["resource"], "orders/42", "{locks}");
    let shown: u64 = lock["holder"]["fencingToken"].as_str().unwrap().parse().unwrap();
    assert!(shown >= lease.fencing_token);
    assert_eq!(lock["waiters"], serde_json::json!(["bob"]));
    assert_eq!(
        json(&daemon, "/status/api/locks?prefix=other/").await["locks"],
        serde_json::json!([])
    );

    // Followed over SSE: the current holder, then its release.
    let mut watch = Connection::open(daemon.metrics_addr, Protocol::Http1)
        .await
        .send("GET", "/status/api/watch?resource=orders/42", "", None)
        .await;
    watch.expect_status(200).await;
    assert_eq!(watch.content_type, "text/event-stream");
    let (kind, current) = watch.next_event().await;
    assert_eq!(
        (kind.as_str(), &current["event"]),
        ("result", &Value::from("WATCH_EVENT_CURRENT"))
    );
    assert!(crate::support::release(&mut client, &lease).await);
    let (_, released) = watch.next_event().await;
    assert_eq!(released["event"], "WATCH_EVENT_RELEASED", "{released}");
    assert!(waiting.await.unwrap().unwrap().into_inner().acquired);

    // An election, its leader and term.
    let mut campaign = Connection::open(daemon.addr, Protocol::Http1)
        .await
        .send(
            "POST",
            "/v1/elections/jobs/leader:campaign",
            r#"{"candidate":"node-a","ttl":"5s"}"#,
            None,
        )
        .await;
    campaign.expect_status(200).await;
    let elected: Value = serde_json::from_str(&campaign.next_within(Duration::from_secs(20)).await.unwrap()).unwrap();
    let term = elected["result"]["term"].as_str().unwrap().to_owned();
    let elections = json(&daemon, "/status/api/elections?prefix=jobs/").await;
    assert_eq!(elections["elections"][0]["election"], "jobs/leader", "{elections}");
    assert_eq!(elections["elections"][0]["leader"]["candidate"], "node-a");
    assert_eq!(elections["elections"][0]["leader"]["term"], term.as_str());
    let mut observe = Connection::open(daemon.metrics_addr, Protocol::Http1)
        .await
        .send("GET", "/status/api/observe?election=jobs/leader", "", None)
        .await;
    observe.expect_status(200).await;
    let (_, leader) = observe.next_event().await;
    assert_eq!(leader["candidate"], "node-a");

    // Two grants went through this daemon in the step under way.
    let rates = json(&daemon, "/status/api/rates").await;
    assert_eq!(rates["stepSeconds"], 10);
    let acquired: u64 = rates["acquired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert!(acquired >= 2, "{rates}");

    // A master killed: unusable, and why.
    cluster.kill(0);
    let masters = json_until(&daemon, "/status/api/masters", |m| {
        m["masters"][0]["standing"] == "unusable"
    })
    .await;
    assert!(
        masters["masters"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("unreachable"),
        "{masters}"
    );
    assert_eq!(masters["usable"], 4);
}
