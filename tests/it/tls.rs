//! TLS (docs/security.md): the gRPC listener with TLS and mutual TLS,
//! redlockctl sending its token and client certificate, and `rediss://`
//! masters with a CA and a client certificate.

use crate::support;

use std::time::Duration;

use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redis::connect::RedisNodeConfig;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{Announce, LockValue, Node};
use redlockd_client::proto::lock_client::LockClient;
use support::certs::Pki;
use support::redis_node::{KEY, TTL, node_config};
use support::tenants::{ALPHA, BETA};
use support::*;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

/// A CA for the server and the good clients, another for the bad ones.
fn pki(dir: &std::path::Path) -> Pki {
    let pki = Pki::new(dir);
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "client", "extendedKeyUsage=clientAuth");
    pki.ca("other-ca");
    pki.issue("other-ca", "stranger", "extendedKeyUsage=clientAuth");
    pki
}

/// A TLS client of `daemon` trusting `pki`'s CA, with client certificate
/// `identity` if given; `None` when the connection cannot be made.
async fn tls_client(daemon: &Daemon, pki: &Pki, identity: Option<&str>) -> Option<LockClient<Channel>> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(pki.read("ca.pem")))
        .domain_name("127.0.0.1");
    if let Some(name) = identity {
        tls = tls.identity(Identity::from_pem(
            pki.read(&format!("{name}.pem")),
            pki.read(&format!("{name}.key")),
        ));
    }
    let endpoint = Channel::from_shared(format!("https://{}", daemon.addr))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(5));
    endpoint.connect().await.ok().map(LockClient::new)
}

/// Whether `client` (if it connected at all) can take and release a lock.
async fn can_lock(client: Option<LockClient<Channel>>, resource: &str) -> Result<(), String> {
    let mut client = client.ok_or("the connection was refused")?;
    let reply = client
        .acquire(acquire_req(resource, 2.0, 0.0))
        .await
        .map_err(|status| format!("{:?}: {}", status.code(), status.message()))?
        .into_inner();
    assert!(reply.acquired, "{reply:?}");
    assert!(release(&mut client, &reply.lease.unwrap()).await);
    Ok(())
}

#[tokio::test]
async fn mutual_tls_serves_only_clients_with_a_certificate_from_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__SERVER__TLS_CERT_FILE", pki.file("server.pem")),
            ("REDLOCKD__SERVER__TLS_KEY_FILE", pki.file("server.key")),
            ("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE", pki.file("ca.pem")),
        ],
    ))
    .await;
    let good = tls_client(&daemon, &pki, Some("client")).await;
    assert_eq!(can_lock(good, "mtls").await, Ok(()));
    let anonymous = tls_client(&daemon, &pki, None).await;
    assert!(
        can_lock(anonymous, "mtls").await.is_err(),
        "a client without a certificate was served"
    );
    let stranger = tls_client(&daemon, &pki, Some("stranger")).await;
    assert!(
        can_lock(stranger, "mtls").await.is_err(),
        "a certificate from another CA was accepted"
    );
    // Plain text to a TLS port gets nowhere either.
    let served = match LockClient::connect(format!("http://{}", daemon.addr)).await {
        Ok(mut client) => client.acquire(acquire_req("mtls", 2.0, 0.0)).await.is_ok(),
        Err(_) => false,
    };
    assert!(!served, "a plain-text client was served on the TLS port");
    daemon.stop().await;
}

#[tokio::test]
async fn tls_without_client_ca_serves_any_client_that_trusts_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__SERVER__TLS_CERT_FILE", pki.file("server.pem")),
            ("REDLOCKD__SERVER__TLS_KEY_FILE", pki.file("server.key")),
        ],
    ))
    .await;
    assert_eq!(can_lock(tls_client(&daemon, &pki, None).await, "tls").await, Ok(()));
    daemon.stop().await;
}

/// Runs redlockctl with `args`, and `token` in REDLOCKD_TOKEN; (exit code,
/// stdout, stderr).
async fn redlockctl(args: &[&str], token: Option<&str>) -> (i32, String, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockctl"));
    command.args(args).env_remove("REDLOCKD_TOKEN");
    if let Some(token) = token {
        command.env("REDLOCKD_TOKEN", token);
    }
    let output = command.output().await.unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn redlockctl_sends_the_token_and_its_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let cluster = Cluster::start(5);
    let file = dir.path().join("tenants.toml");
    std::fs::write(
        &file,
        format!("[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"jobs/\"]\n"),
    )
    .unwrap();
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__SERVER__TLS_CERT_FILE", pki.file("server.pem")),
            ("REDLOCKD__SERVER__TLS_KEY_FILE", pki.file("server.key")),
            ("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE", pki.file("ca.pem")),
            ("REDLOCKD__AUTH__TOKENS_FILE", file.to_string_lossy().into_owned()),
        ],
    ))
    .await;
    let addr = format!("https://{}", daemon.addr);
    let (ca, cert, key) = (pki.file("ca.pem"), pki.file("client.pem"), pki.file("client.key"));
    let tls = ["--addr", &addr, "--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key];
    let take = [&tls[..], &["acquire", "jobs/nightly", "--ttl", "2s"]].concat();
    let (code, out, err) = redlockctl(&take, Some(ALPHA)).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("fencing_token="), "{out}");
    for token in [None, Some(BETA)] {
        let (code, out, err) = redlockctl(&take, token).await;
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("Unauthenticated"), "{err}");
    }
    // Without its client certificate, the handshake fails.
    let (code, _, err) = redlockctl(
        &["--addr", &addr, "--tls-ca", &ca, "inspect", "jobs/nightly"],
        Some(ALPHA),
    )
    .await;
    assert_eq!(code, 2, "{err}");
    daemon.stop().await;
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate.
fn make_certs(dir: &std::path::Path) {
    let pki = support::certs::Pki::new(dir);
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "client", "extendedKeyUsage=clientAuth");
}

#[tokio::test]
async fn rediss_urls_use_the_configured_ca_and_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    make_certs(dir.path());
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let tls_port = redlockd::dev::free_port().unwrap().to_string();
    let binary = find_redis_server().unwrap();
    let _master = RedisProcess::start(
        &binary,
        &[
            "--tls-port",
            &tls_port,
            "--tls-cert-file",
            &file("server.pem"),
            "--tls-key-file",
            &file("server.key"),
            "--tls-ca-cert-file",
            &file("ca.pem"),
            "--tls-auth-clients",
            "yes",
        ],
    )
    .unwrap();
    let url = format!("rediss://127.0.0.1:{tls_port}");

    let ca = dir.path().join("ca.pem");
    let (cert, key) = (dir.path().join("client.pem"), dir.path().join("client.key"));
    let (ca, cert, key) = (
        std::fs::read(ca).unwrap(),
        std::fs::read(cert).unwrap(),
        std::fs::read(key).unwrap(),
    );
    let tls = redlockd::redis::tls::connector(Some(&ca), Some((&cert, &key))).unwrap();
    let node = RedisNode::connect(&RedisNodeConfig {
        tls: Some(tls),
        ..node_config(url.clone())
    })
    .unwrap();
    node.wait_connected(Duration::from_secs(5)).await.unwrap();
    let seen = Probed::probe(&node).await.unwrap();
    Probed::repair(&node, &support::keys::every_bucket(), &seen.identity())
        .await
        .unwrap();
    let value = LockValue::random();
    assert!(
        node.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        node.unlock(KEY.as_str(), value.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );

    // Without the client certificate the master refuses the handshake.
    let no_cert = redlockd::redis::tls::connector(Some(&ca), None).unwrap();
    let refused = RedisNode::connect(&RedisNodeConfig {
        tls: Some(no_cert),
        ..node_config(url)
    })
    .unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(3),
        refused.unlock(KEY.as_str(), value.expose(), Announce::IfWaited),
    )
    .await;
    assert!(!matches!(outcome, Ok(Ok(_))), "{outcome:?}");
}
