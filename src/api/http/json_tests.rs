//! JSON requests and replies (docs/http.md): durations, enums and both
//! spellings read, bad JSON named by its field, query strings, lowerCamel
//! replies with tokens as strings.

use super::*;
use crate::api::proto::{AcquireRequest, AcquireResponse, Lease, ListLocksRequest, ResignRequest};

fn acquire(path: Option<&str>, body: &str) -> Result<AcquireRequest, Status> {
    request(Sources {
        message: "redlockd.v1.AcquireRequest",
        path: path.map(|p| ("resource", p.to_owned())),
        query: None,
        body: body.as_bytes(),
    })
}

#[test]
fn durations_enums_and_both_spellings_are_read() {
    let req = acquire(
        Some("orders/42"),
        r#"{"ttl":"1.5s","wait":"0s","mode":"LOCK_MODE_SHARED","reentrancy_key":"k"}"#,
    )
    .unwrap();
    assert_eq!(req.resource, "orders/42");
    assert_eq!(req.ttl.map(|d| (d.seconds, d.nanos)), Some((1, 500_000_000)));
    assert_eq!(req.reentrancy_key, "k");
    assert_eq!(req.mode, crate::api::proto::LockMode::Shared as i32);
    assert_eq!(
        acquire(Some("x"), r#"{"reentrancyKey":"k"}"#).unwrap().reentrancy_key,
        "k"
    );
}

#[test]
fn bad_json_names_the_field() {
    let message = |body: &str| acquire(Some("x"), body).unwrap_err().message().to_owned();
    assert!(message(r#"{"ttl":"1.5s","colour":1}"#).contains("unknown field `colour`"));
    assert!(
        message(r#"{"ttl":5}"#).starts_with("ttl: "),
        "{}",
        message(r#"{"ttl":5}"#)
    );
    assert!(message(r#"{"permits":true}"#).starts_with("permits: "));
    assert!(message(r#"{"ttl":"#).contains("not valid JSON"));
    assert!(message("[1]").contains("must be a JSON object"));
    assert!(message(r#"{"resource":"y"}"#).starts_with("resource: the path names \"x\""));
    let term = request::<ResignRequest>(Sources {
        message: "redlockd.v1.ResignRequest",
        path: Some(("election", "e".into())),
        query: None,
        body: br#"{"term":9007199254740993}"#,
    })
    .unwrap_err();
    assert!(
        term.message()
            .starts_with("term: a 64-bit integer must be a JSON string"),
        "{}",
        term.message()
    );
    let term: ResignRequest = request(Sources {
        message: "redlockd.v1.ResignRequest",
        path: Some(("election", "e".into())),
        query: None,
        body: br#"{"term":"9007199254740993"}"#,
    })
    .unwrap();
    assert_eq!(term.term, 9_007_199_254_740_993);
}

#[test]
fn query_strings_fill_fields() {
    let req: ListLocksRequest = request(Sources {
        message: "redlockd.v1.ListLocksRequest",
        path: None,
        query: Some("prefix=orders%2F&page_size=10"),
        body: b"",
    })
    .unwrap();
    assert_eq!((req.prefix.as_str(), req.page_size), ("orders/", 10));
}

#[test]
fn replies_are_lower_camel_with_tokens_as_strings_and_zeros_written() {
    let reply = AcquireResponse {
        acquired: true,
        lease: Some(Lease {
            fencing_token: (1 << 53) + 1,
            validity: Some(pbjson_types::Duration {
                seconds: 9,
                nanos: 897_000_000,
            }),
            ..Lease::default()
        }),
        ..AcquireResponse::default()
    };
    let json: Value = serde_json::from_slice(&super::reply(&reply).unwrap()).unwrap();
    assert_eq!(json["lease"]["fencingToken"], "9007199254740993");
    assert_eq!(json["lease"]["validity"], "9.897s");
    assert_eq!(json["attempts"], 0);
    assert_eq!(json["reason"], "FAILURE_REASON_UNSPECIFIED");
}
