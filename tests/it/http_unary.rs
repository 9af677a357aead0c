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
    // Every master verified before the first call (a loaded machine is slow to).
    daemon.until_usable(5).await;
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

#[tokio::test]
async fn extend_inspect_and_the_set_routes_answer_as_grpc_with_exact_tokens() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // Every master verified before the first call (a loaded machine is slow to).
    daemon.until_usable(5).await;
    let mut http = Client::connect(daemon.addr).await;
    let lease = http
        .post("/v1/locks/jobs/a:acquire", r#"{"ttl":"10s","owner":"o"}"#)
        .await
        .json()["lease"]
        .clone();
    let value = lease["value"].as_str().unwrap();
    let token = lease["fencingToken"].as_str().unwrap();

    // Tokens are above 2^53 (counters start at the masters' clocks in µs):
    // the string is exact where a JSON number would not be.
    let exact: u64 = token.parse().unwrap();
    assert!(exact > 1 << 53, "{exact}");
    let mut grpc = daemon.client().await;
    let inspected = grpc
        .inspect(redlockd_client::proto::InspectRequest {
            resource: "jobs/a".into(),
        })
        .await
        .unwrap()
        .into_inner();
    // The holder's token (docs/design.md: the records' largest, which may
    // be above the lease's) is the same exact number over HTTP as over gRPC.
    let holder_token = inspected.holder.unwrap().fencing_token;

    let extended = http
        .post(
            "/v1/locks/jobs/a:extend",
            &format!(r#"{{"value":"{value}","ttl":"20s"}}"#),
        )
        .await;
    assert_eq!(extended.status, 200);
    assert_eq!(extended.json()["extended"], true);
    let inspect = http.get("/v1/locks/jobs/a").await;
    assert_eq!(inspect.status, 200, "{}", String::from_utf8_lossy(&inspect.body));
    let inspect = inspect.json();
    assert_eq!(inspect["held"], true);
    assert_eq!(inspect["holder"]["fencingToken"], holder_token.to_string().as_str());
    assert_eq!(inspect["holder"]["owner"], "o");
    // RFC 3339 (pbjson-types writes UTC as "+00:00").
    let since = inspect["holder"]["since"].as_str().unwrap();
    assert!(since.ends_with('Z') || since.ends_with("+00:00"), "{since}");
    // A wrong value extends nothing: 200, extended false.
    let wrong = http
        .post(
            "/v1/locks/jobs/a:extend",
            &format!(r#"{{"value":"{}"}}"#, "0".repeat(40)),
        )
        .await;
    assert_eq!(wrong.json()["extended"], false);

    // Sets: all or none, one value, a token per member.
    let set = http
        .post("/v1/locks:acquireMany", r#"{"resources":["s/1","s/2"],"ttl":"10s"}"#)
        .await;
    assert_eq!(set.status, 200);
    let set = set.json();
    assert_eq!(set["acquired"], true);
    let leases = set["leases"].as_array().unwrap();
    assert_eq!(leases.len(), 2);
    let set_value = leases[0]["value"].as_str().unwrap();
    let overlapping = http
        .post("/v1/locks:acquireMany", r#"{"resources":["s/2","s/3"],"ttl":"10s"}"#)
        .await
        .json();
    assert_eq!(overlapping["acquired"], false);
    let extended = http
        .post(
            "/v1/locks:extendMany",
            &format!(r#"{{"resources":["s/1","s/2"],"value":"{set_value}","ttl":"15s"}}"#),
        )
        .await
        .json();
    assert_eq!(extended["members"], serde_json::json!([true, true]));
    let released = http
        .post(
            "/v1/locks:releaseMany",
            &format!(r#"{{"resources":["s/1","s/2"],"value":"{set_value}"}}"#),
        )
        .await;
    assert_eq!(released.status, 200, "{}", String::from_utf8_lossy(&released.body));
    assert_eq!(released.json()["released"], true);
    let too_many: Vec<String> = (0..17).map(|i| format!("\"m/{i}\"")).collect();
    let refused = http
        .post(
            "/v1/locks:acquireMany",
            &format!(r#"{{"resources":[{}]}}"#, too_many.join(",")),
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(refused.message().contains("resources"), "{}", refused.message());
    daemon.stop().await;
}
