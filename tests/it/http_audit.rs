//! Audit over HTTP (docs/http.md#authentication): the real binary under
//! mutual TLS and tenants logs an HTTP call's events as a gRPC call's, the
//! peer named by its client certificate's subject and address, and no lock
//! value or token in any line.

use std::time::Duration;

use crate::audit::audited_daemon;
use crate::http_tls::{connect_to, post_with};
use crate::support::Cluster;
use crate::support::tenants::ALPHA;

#[tokio::test]
async fn an_http_call_is_audited_with_the_certificate_subject_as_a_grpc_call_is() {
    let cluster = Cluster::start(3);
    let (_dir, pki, port, child) = audited_daemon(&cluster, &[]);
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    // HTTP/1.1 over mutual TLS, the tenant's token in Authorization.
    let acquired = loop {
        if let Some(tls) = connect_to(addr, &pki, Some("auditor"), &["http/1.1"]).await {
            let (status, body) = post_with(
                tls,
                false,
                "/v1/locks/audited:acquire",
                r#"{"ttl":"10s","owner":"auditor"}"#,
                Some(ALPHA),
            )
            .await;
            if status == 200 && body.contains(r#""acquired":true"#) {
                break body;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let lease: serde_json::Value = serde_json::from_str(&acquired).unwrap();
    let value = lease["lease"]["value"].as_str().unwrap().to_owned();
    let tls = connect_to(addr, &pki, Some("auditor"), &["h2"]).await.unwrap();
    let (status, body) = post_with(
        tls,
        true,
        "/v1/locks/audited:release",
        &format!(r#"{{"value":"{value}"}}"#),
        Some(ALPHA),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().await.unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.contains(&value), "a lock value reached the log");
    assert!(!log.contains(ALPHA), "a token reached the log");
    let audit: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|json| json["target"] == "redlockd::audit")
        .collect();
    let grant = audit.iter().find(|e| e["event"] == "grant").expect("a grant event");
    assert_eq!(
        (grant["tenant"].as_str(), grant["owner"].as_str()),
        (Some("alpha"), Some("auditor"))
    );
    assert_eq!(grant["resource"], "audited");
    let peer = grant["peer"].as_str().unwrap();
    assert!(peer.starts_with("CN=auditor (127.0.0.1:"), "{peer}");
    let release = audit.iter().find(|e| e["event"] == "release").expect("a release event");
    assert!(
        release["peer"].as_str().unwrap().starts_with("CN=auditor (127.0.0.1:"),
        "{release}"
    );
}
