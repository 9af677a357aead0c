//! The audit trail, from the real binary's JSON log over mutual TLS.
use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::proto::admin_client::AdminClient;
use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{ExtendRequest, ForceReleaseRequest, HoldEvent, HoldRequest, HoldStart, ReleaseRequest};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

use crate::support::certs::Pki;
use crate::support::tenants::{ALPHA, acquire, authed, dur};
use crate::support::{Cluster, test_env};

/// A reentrancy key, which no log line may show.
const REENTRANCY_KEY: &str = "trace-4bf92f3577b34da6a3ce929d0e0e4736";

/// Counts, per event, the audit lines of a JSON log.
fn audit_events(log: &str) -> HashMap<String, Vec<serde_json::Value>> {
    let mut events: HashMap<String, Vec<serde_json::Value>> = HashMap::new();
    for line in log.lines() {
        let Ok(json) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if json["target"] == "redlockd::audit" {
            events
                .entry(json["event"].as_str().unwrap_or("?").to_owned())
                .or_default()
                .push(json);
        }
    }
    events
}

/// The real binary under mutual TLS (a server and an `auditor` client
/// certificate from one CA) with one tenant, `alpha`, logging JSON, plus
/// `extra` settings; its certificates live in the returned directory.
pub(crate) fn audited_daemon(
    cluster: &Cluster,
    extra: &[(&str, &str)],
) -> (tempfile::TempDir, Pki, u16, tokio::process::Child) {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "auditor", "extendedKeyUsage=clientAuth");
    let file = dir.path().join("tenants.toml");
    std::fs::write(
        &file,
        format!("[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"\"]\nscopes = [\"admin\"]\n"),
    )
    .unwrap();
    let port = redlockd::dev::free_port().unwrap();
    let mut env = test_env(cluster);
    for (key, value) in [
        ("REDLOCKD__AUTH__TOKENS_FILE", file.to_string_lossy().into_owned()),
        ("REDLOCKD__SERVER__LISTEN", format!("127.0.0.1:{port}")),
        ("REDLOCKD__SERVER__TLS_CERT_FILE", pki.file("server.pem")),
        ("REDLOCKD__SERVER__TLS_KEY_FILE", pki.file("server.key")),
        ("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE", pki.file("ca.pem")),
        (
            "REDLOCKD__METRICS__LISTEN",
            format!("127.0.0.1:{}", redlockd::dev::free_port().unwrap()),
        ),
        ("REDLOCKD__LOG__FORMAT", "json".into()),
    ] {
        env.insert(key.into(), value);
    }
    for (key, value) in extra {
        env.insert((*key).into(), (*value).into());
    }
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockd"))
        .envs(&env)
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    (dir, pki, port, child)
}

#[tokio::test]
async fn audit_lines_appear_once_per_event_with_the_tls_subject_and_no_log_line_holds_a_lock_value() {
    let cluster = Cluster::start(3);
    let (_dir, pki, port, child) = audited_daemon(&cluster, &[("REDLOCKD__LOG__FILTER", "debug")]);
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(pki.read("ca.pem")))
        .domain_name("127.0.0.1")
        .identity(Identity::from_pem(pki.read("auditor.pem"), pki.read("auditor.key")));
    let endpoint = Channel::from_shared(format!("https://127.0.0.1:{port}"))
        .unwrap()
        .tls_config(tls)
        .unwrap();
    let channel = loop {
        if let Ok(channel) = endpoint.connect().await {
            break channel;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut client = LockClient::new(channel.clone());
    let mut admin = AdminClient::new(channel);
    let mut values = Vec::new();
    // A grant and a release.
    let lease = loop {
        match client
            .acquire(authed(acquire("audited", 10_000, "auditor"), ALPHA))
            .await
        {
            Ok(reply) => break reply.into_inner().lease.unwrap(),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    values.push(lease.value.clone());
    client
        .release(authed(
            ReleaseRequest {
                resource: "audited".into(),
                value: lease.value.clone(),
            },
            ALPHA,
        ))
        .await
        .unwrap();
    // A grant under a reentrancy key, taken again with it: one grant, and
    // the key reaches no log line.
    let keyed = || {
        let request = redlockd_client::proto::AcquireRequest {
            reentrancy_key: REENTRANCY_KEY.into(),
            ..acquire("keyed", 10_000, "auditor")
        };
        authed(request, ALPHA)
    };
    let first = client.acquire(keyed()).await.unwrap().into_inner().lease.unwrap();
    let again = client.acquire(keyed()).await.unwrap().into_inner().lease.unwrap();
    assert_eq!((&first.value, first.fencing_token), (&again.value, again.fencing_token));
    values.push(first.value.clone());
    // A grant, a force release, a failed extension.
    let lease = client
        .acquire(authed(acquire("audited", 10_000, "auditor"), ALPHA))
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    values.push(lease.value.clone());
    let force = |resource: &str| {
        authed(
            ForceReleaseRequest {
                resource: resource.into(),
                reason: "audit test".into(),
            },
            ALPHA,
        )
    };
    admin.force_release(force("audited")).await.unwrap();
    let extended = client
        .extend(authed(
            ExtendRequest {
                resource: "audited".into(),
                value: lease.value.clone(),
                ttl: dur(10_000),
            },
            ALPHA,
        ))
        .await
        .unwrap();
    assert!(!extended.into_inner().extended);
    // A session's grant, its loss (a force release), and its release
    // attempt after the loss.
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(HoldRequest {
        request: Some(Ask::Start(HoldStart {
            resource: "session".into(),
            ttl: dur(10_000),
            owner: "sessioner".into(),
            ..HoldStart::default()
        })),
    })
    .await
    .unwrap();
    let mut session = client
        .hold(authed(tokio_stream::wrappers::ReceiverStream::new(rx), ALPHA))
        .await
        .unwrap()
        .into_inner();
    let acquired = session.message().await.unwrap().unwrap();
    values.push(acquired.lease.unwrap().value);
    admin.force_release(force("session")).await.unwrap();
    let lost = session.message().await.unwrap().unwrap();
    assert_eq!(lost.event(), HoldEvent::Lost);
    drop(tx);
    tokio::time::sleep(Duration::from_millis(300)).await;

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
    for value in &values {
        assert!(!log.contains(value.as_str()), "a lock value reached the log");
    }
    assert!(!log.contains(ALPHA), "a token reached the log");
    assert!(!log.contains(REENTRANCY_KEY), "a reentrancy key reached the log");
    let events = audit_events(&log);
    let count = |event: &str| events.get(event).map_or(0, Vec::len);
    assert_eq!(
        (
            count("grant"),
            count("release"),
            count("force_release"),
            count("extension_failed"),
            count("lost")
        ),
        (4, 2, 2, 1, 1),
        "{events:#?}"
    );
    let grant = &events["grant"][0];
    assert_eq!(grant["tenant"], "alpha");
    assert_eq!(grant["owner"], "auditor");
    assert_eq!(grant["resource"], "audited");
    assert!(grant["token"].as_u64().is_some(), "{grant}");
    // Mutual TLS: the client certificate's subject, and the address.
    let peer = grant["peer"].as_str().unwrap();
    assert!(peer.starts_with("CN=auditor (127.0.0.1:"), "{peer}");
    assert_eq!(
        events["release"][0]["owner"], "auditor",
        "the release names the owner it was granted to"
    );
    assert_eq!(events["lost"][0]["owner"], "sessioner");
    assert_eq!(events["lost"][0]["resource"], "session");
    assert_eq!(events["force_release"][0]["reason"], "audit test");
}
