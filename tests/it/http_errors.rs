//! Bad input over HTTP (docs/http.md#errors): malformed JSON, wrong types,
//! a token as a JSON number, an unknown route or method, a body over the
//! limit, another content type, an HTTP/1.0 client — each answered with
//! its status and a `google.rpc.Status` body, on a connection that goes on
//! serving, and nothing held is lost. And auth, scopes and quotas refused
//! as on gRPC.

use hyper::Method;

use crate::support::http::{Client, raw};
use crate::support::tenants::{ALPHA, BETA, daemon_with_tenants};
use crate::support::{Cluster, Daemon};

#[tokio::test]
async fn bad_requests_get_their_status_and_a_google_rpc_status_and_the_held_lock_stays() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // Every master verified before the first call (a loaded machine is slow to).
    daemon.until_usable(5).await;
    let mut http = Client::connect(daemon.addr).await;
    let held = http.post("/v1/locks/kept:acquire", r#"{"ttl":"30s"}"#).await.json();
    let token = held["lease"]["fencingToken"].as_str().unwrap().to_owned();

    let cases: &[(&str, &str, u16, i64, &str)] = &[
        ("/v1/locks/x:acquire", r#"{"ttl":"10s""#, 400, 3, "not valid JSON"),
        (
            "/v1/locks/x:acquire",
            r#"[{"ttl":"10s"}]"#,
            400,
            3,
            "must be a JSON object",
        ),
        ("/v1/locks/x:acquire", r#"{"ttl":10}"#, 400, 3, "ttl: "),
        ("/v1/locks/x:acquire", r#"{"owner":7}"#, 400, 3, "owner: "),
        ("/v1/locks/x:acquire", r#"{"mode":"LOCK_MODE_NONE"}"#, 400, 3, "mode: "),
        (
            "/v1/locks/x:acquire",
            r#"{"ttl":"10s","fencingToken":"1"}"#,
            400,
            3,
            "unknown field `fencingToken`",
        ),
        ("/v1/locks/x:release", r#"{"value":"zz"}"#, 400, 3, "value"),
        (
            "/v1/elections/e:resign",
            r#"{"term":12345678901234567}"#,
            400,
            3,
            "term: a 64-bit integer",
        ),
        ("/v1/elections/e:resign", r#"{"term":"12x"}"#, 400, 3, "term: "),
        ("/v1/locks/x:frobnicate", "{}", 405, 12, "takes GET only"),
        ("/v2/locks/x:acquire", "{}", 404, 5, "no route POST /v2/locks/x:acquire"),
    ];
    for (path, body, status, code, message) in cases {
        let reply = http.post(path, body).await;
        assert_eq!(
            reply.status,
            *status,
            "{path} {body}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.headers["content-type"], "application/json", "{path} {body}");
        let json = reply.json();
        assert_eq!(json["code"], *code, "{path} {body}: {json}");
        assert!(reply.message().contains(message), "{path} {body}: {}", reply.message());
    }
    let wrong_method = http.send(Method::DELETE, "/v1/locks/x:acquire", &[], "").await;
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.headers["allow"], "POST");
    let query_on_post = http.post("/v1/locks/x:acquire?ttl=10s", "{}").await;
    assert_eq!(query_on_post.status, 400);
    let form = http
        .send(
            Method::POST,
            "/v1/locks/x:acquire",
            &[("content-type", "text/plain")],
            "{}",
        )
        .await;
    assert_eq!(form.status, 415);
    assert!(form.message().contains("content-type"), "{}", form.message());
    // What `curl -d` (and a cross-origin form) sends: refused, nothing taken.
    let form = http
        .send(
            Method::POST,
            "/v1/locks/curl:acquire",
            &[("content-type", "application/x-www-form-urlencoded")],
            r#"{"ttl":"5s"}"#,
        )
        .await;
    assert_eq!(form.status, 415);
    assert!(form.message().contains("--json"), "{}", form.message());
    assert_eq!(http.get("/v1/locks/curl").await.json()["held"], false);
    // No content type with a body (a browser's no-cors Blob): refused too.
    let none = http
        .send(Method::POST, "/v1/locks/curl:acquire", &[], r#"{"ttl":"5s"}"#)
        .await;
    assert_eq!(none.status, 415);
    assert_eq!(http.get("/v1/locks/curl").await.json()["held"], false);
    // Over the 64 KiB limit: 413, and the daemon stays up.
    let big = format!(r#"{{"owner":"{}"}}"#, "a".repeat(70 * 1024));
    let mut other = Client::connect(daemon.addr).await;
    let too_big = other.post("/v1/locks/x:acquire", &big).await;
    assert_eq!(too_big.status, 413);
    assert_eq!(too_big.json()["code"], 8);
    // A name that is not UTF-8 once decoded.
    let bad_name = http.post("/v1/locks/%FF:acquire", "{}").await;
    assert_eq!(bad_name.status, 400);
    assert!(bad_name.message().starts_with("resource: "), "{}", bad_name.message());

    // HTTP/1.0: served (Content-Length, then the connection closes).
    let old = raw(daemon.addr, b"GET /v1/locks/kept HTTP/1.0\r\nHost: localhost\r\n\r\n").await;
    assert!(
        old.starts_with("HTTP/1.0 200") || old.starts_with("HTTP/1.1 200"),
        "{old}"
    );
    assert!(old.contains("\"held\":true"), "{old}");
    // A request line hyper cannot parse: 400 from hyper, no crash.
    let garbage = raw(daemon.addr, b"BLAH\r\n\r\n").await;
    assert!(garbage.is_empty() || garbage.starts_with("HTTP/1.1 400"), "{garbage}");

    // After all that, on the same connection: the lock is still held, with its token.
    let inspect = http.get("/v1/locks/kept").await.json();
    assert_eq!(inspect["held"], true);
    let holder: u64 = inspect["holder"]["fencingToken"].as_str().unwrap().parse().unwrap();
    assert!(holder >= token.parse::<u64>().unwrap(), "{holder} {token}");
    // And a gRPC client asking for an unknown service still gets gRPC's UNIMPLEMENTED.
    let grpc = http
        .send(
            Method::POST,
            "/nope.v1.Nothing/Call",
            &[("content-type", "application/grpc")],
            "",
        )
        .await;
    assert_eq!(grpc.status, 200);
    assert_eq!(grpc.headers["grpc-status"], "12");
    daemon.stop().await;
}

#[tokio::test]
async fn tokens_scopes_and_quotas_are_refused_over_http_as_over_grpc() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), "[tenant.quota]\nmax_locks_held = 1\n").await;
    daemon.until_usable(5).await;
    // Over HTTP/2 the 401 arrives whole, body included (the request body is
    // read before the answer, so the stream is not reset under it).
    let mut h2 = Client::connect_with(daemon.addr, crate::support::http::Version::Http2).await;
    let refused = h2.post("/v1/locks/x:acquire", r#"{"ttl":"5s"}"#).await;
    assert_eq!(
        (refused.status.as_u16(), refused.json()["code"].as_i64()),
        (401, Some(16))
    );
    let mut anonymous = Client::connect(daemon.addr).await;
    let missing = anonymous.post("/v1/locks/x:acquire", "{}").await;
    assert_eq!(missing.status, 401);
    assert_eq!(missing.headers["www-authenticate"], "Bearer");
    assert_eq!(missing.json()["code"], 16);
    // Authentication comes before the body is read: bad JSON without a token is 401.
    assert_eq!(anonymous.post("/v1/locks/x:acquire", "{").await.status, 401);
    let mut wrong = Client::connect(daemon.addr)
        .await
        .with_token("not-a-token-of-this-daemon-000000");
    assert_eq!(wrong.post("/v1/locks/x:acquire", "{}").await.status, 401);

    let mut alpha = Client::connect(daemon.addr).await.with_token(ALPHA);
    let mut beta = Client::connect(daemon.addr).await.with_token(BETA);
    let taken = alpha.post("/v1/locks/orders/1:acquire", r#"{"ttl":"30s"}"#).await;
    assert_eq!(taken.json()["acquired"], true);
    // Tenants are apart: beta's "orders/1" is another lock.
    let beta_lock = beta.post("/v1/locks/orders/1:acquire", r#"{"ttl":"30s"}"#).await;
    assert_eq!(beta_lock.json()["acquired"], true);
    // beta's quota is one lock held: the second is 429 with a QuotaFailure.
    let over = beta.post("/v1/locks/orders/2:acquire", r#"{"ttl":"30s"}"#).await;
    assert_eq!(over.status, 429, "{}", String::from_utf8_lossy(&over.body));
    let over = over.json();
    assert_eq!(over["code"], 8);
    assert_eq!(
        over["details"][0]["@type"],
        "type.googleapis.com/google.rpc.QuotaFailure"
    );
    assert_eq!(over["details"][0]["violations"][0]["quotaId"], "max_locks_held");

    // The admin scope: beta lacks it (403), alpha lists its own lock and force-releases it.
    let refused = beta.get("/v1/admin/locks?prefix=orders/&page_size=10").await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["code"], 7);
    let listed = alpha.get("/v1/admin/locks?prefix=orders%2F&page_size=10").await;
    assert_eq!(listed.status, 200, "{}", String::from_utf8_lossy(&listed.body));
    let listed = listed.json();
    let resources: Vec<&str> = listed["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["resource"].as_str().unwrap())
        .collect();
    assert_eq!(resources, ["orders/1"]);
    let forced = alpha
        .post("/v1/admin/locks/orders/1:forceRelease", r#"{"reason":"stuck job"}"#)
        .await;
    assert_eq!(forced.status, 200, "{}", String::from_utf8_lossy(&forced.body));
    assert!(forced.json()["mastersHeld"].as_u64().unwrap() >= 3);
    let after = alpha.get("/v1/locks/orders/1").await.json();
    assert_eq!(after["held"], false);
    daemon.stop().await;
}
