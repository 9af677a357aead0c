//! The HTTP/JSON routes (docs/http.md) against a real daemon and five
//! masters over real HTTP/1.1 and HTTP/2: the same calls, validation and
//! errors as gRPC, JSON per the proto3 mapping.

use serde_json::Value;

use crate::support::http::{Client, Version};
use crate::support::{Cluster, Daemon};

#[tokio::test]
async fn acquire_over_http_takes_the_lock_grpc_sees_and_answers_proto3_json() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Client::connect(daemon.addr).await;

    let reply = http
        .post("/v1/locks/orders/42:acquire", r#"{"ttl":"10s","owner":"job-7"}"#)
        .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert_eq!(reply.headers["content-type"], "application/json");
    let json = reply.json();
    assert_eq!(json["acquired"], true);
    let lease = &json["lease"];
    assert_eq!(lease["resource"], "orders/42");
    // 64-bit tokens as decimal strings, durations as "<seconds>s".
    let token: u64 = lease["fencingToken"]
        .as_str()
        .expect("the token as a string")
        .parse()
        .unwrap();
    assert!(token > 0);
    let validity = lease["validity"].as_str().expect("validity as a string");
    assert!(validity.ends_with('s'), "{validity}");
    let value = lease["value"].as_str().unwrap().to_owned();
    assert_eq!(value.len(), 40);

    // gRPC sees the same lock: a second acquisition there is refused.
    let mut grpc = daemon.client().await;
    let refused = crate::support::try_acquire(&mut grpc, "orders/42", 5.0, 0.0).await;
    assert!(!refused.acquired);

    // Contention is not an error over HTTP either: 200, acquired false, written out.
    let mut h2 = Client::connect_with(daemon.addr, Version::Http2).await;
    let taken = h2.post("/v1/locks/orders%2F42:acquire", r#"{"ttl":"5s"}"#).await;
    assert_eq!(taken.status, 200);
    let taken = taken.json();
    assert_eq!(taken["acquired"], false);
    assert_eq!(taken["reason"], "FAILURE_REASON_TAKEN");
    assert_eq!(taken["lease"], Value::Null);

    // Bad input: 400 with a google.rpc.Status naming the field.
    let bad = http
        .post("/v1/locks/orders/43:acquire", r#"{"ttl":"10s","tll":"1s"}"#)
        .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["code"], 3);
    assert!(bad.message().contains("unknown field `tll`"), "{}", bad.message());
    let range = http.post("/v1/locks/orders/43:acquire", r#"{"ttl":"0.001s"}"#).await;
    assert_eq!(range.status, 400);
    assert!(range.message().contains("ttl"), "{}", range.message());

    // The token and value release it, over HTTP.
    let released = http
        .post("/v1/locks/orders/42:release", &format!(r#"{{"value":"{value}"}}"#))
        .await;
    assert_eq!(released.status, 200);
    assert_eq!(released.json()["released"], true);
    daemon.stop().await;
}
