//! Security (docs/security.md): TLS and mutual TLS on the gRPC listener, per-tenant
//! bearer tokens with resource prefixes and namespaced keys, the minimal
//! Redis ACL, and limits that keep a flood from starving other clients.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use fred::prelude::{ClientLike, KeysInterface};
use redlockd_client::Pipeline;
use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, ExtendRequest, HoldRequest, HoldStart, InspectRequest, ReleaseRequest};
use support::certs::Pki;
use support::*;
use tonic::Code;
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

fn env_with(cluster: &Cluster, extra: &[(&str, String)]) -> HashMap<String, String> {
    let mut env = test_env(cluster);
    for (key, value) in extra {
        env.insert((*key).to_owned(), value.clone());
    }
    env
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

const ALPHA: &str = "alpha-token-0123456789abcdef0123";
const BETA: &str = "beta-token-0123456789abcdef01234";

/// A daemon with two tenants: `alpha` may lock `shared/` and `alpha/`,
/// `beta` only `shared/`.
async fn daemon_with_tenants(cluster: &Cluster, dir: &std::path::Path) -> Daemon {
    let file = dir.join("tenants.toml");
    std::fs::write(
        &file,
        format!(
            "[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"shared/\", \"alpha/\"]\n\n\
             [[tenant]]\nname = \"beta\"\ntoken = \"{BETA}\"\nprefixes = [\"shared/\"]\n"
        ),
    )
    .unwrap();
    Daemon::start_with(env_with(
        cluster,
        &[("REDLOCKD__AUTH__TOKENS_FILE", file.to_string_lossy().into_owned())],
    ))
    .await
}

/// `message` with `authorization: Bearer <token>`.
fn authed<T>(message: T, token: &str) -> tonic::Request<T> {
    maybe_authed(message, Some(token))
}

/// `message`, with a bearer token if one is given.
fn maybe_authed<T>(message: T, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

fn hold_start(resource: &str) -> HoldRequest {
    HoldRequest {
        request: Some(Ask::Start(HoldStart {
            resource: resource.into(),
            ttl: secs(2.0),
            ..HoldStart::default()
        })),
    }
}

/// The status a Hold stream ends with before it grants anything.
async fn hold_error(client: &mut LockClient<Channel>, request: tonic::Request<()>, resource: &str) -> Code {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(hold_start(resource)).await.unwrap();
    let mut stream_request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    *stream_request.metadata_mut() = request.metadata().clone();
    let outcome = match client.hold(stream_request).await {
        Err(status) => status.code(),
        Ok(response) => match response.into_inner().message().await {
            Err(status) => status.code(),
            Ok(message) => panic!("the session went on: {message:?}"),
        },
    };
    drop(tx);
    outcome
}

#[tokio::test]
async fn calls_without_a_valid_token_are_unauthenticated_on_every_method() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    let mut client = daemon.client().await;
    let value = "0".repeat(40);
    for token in [None, Some("not-a-known-token-0123456789abcdef")] {
        let acquire = client
            .acquire(maybe_authed(acquire_req("shared/x", 2.0, 0.0), token))
            .await
            .unwrap_err();
        assert_eq!(acquire.code(), Code::Unauthenticated, "{acquire:?}");
        assert!(!acquire.message().contains(ALPHA));
        let extend = ExtendRequest {
            resource: "shared/x".into(),
            value: value.clone(),
            ttl: secs(2.0),
        };
        assert_eq!(
            client.extend(maybe_authed(extend, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        let release = ReleaseRequest {
            resource: "shared/x".into(),
            value: value.clone(),
        };
        assert_eq!(
            client.release(maybe_authed(release, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        let inspect = InspectRequest {
            resource: "shared/x".into(),
        };
        assert_eq!(
            client.inspect(maybe_authed(inspect, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        assert_eq!(
            hold_error(&mut client, maybe_authed((), token), "shared/x").await,
            Code::Unauthenticated
        );
        let pipeline = Pipeline::open_with(client.clone(), maybe_authed((), token).into_parts().0).await;
        assert_eq!(pipeline.err().map(|s| s.code()), Some(Code::Unauthenticated));
    }
    // Health stays open for the kubelet's probes.
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    daemon.stop().await;
}

#[tokio::test]
async fn resources_outside_a_tenants_prefixes_are_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    let mut client = daemon.client().await;
    let denied = client
        .acquire(authed(acquire_req("alpha/x", 2.0, 0.0), BETA))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("\"shared/\""), "{}", denied.message());
    let inspect = InspectRequest {
        resource: "alpha/x".into(),
    };
    assert_eq!(
        client.inspect(authed(inspect, BETA)).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert_eq!(
        hold_error(&mut client, authed((), BETA), "alpha/x").await,
        Code::PermissionDenied
    );
    // On a Pipeline stream, the same call is refused the same way.
    let beta = Pipeline::open_with(client.clone(), authed((), BETA).into_parts().0)
        .await
        .unwrap();
    let denied = beta.acquire(acquire_req("alpha/x", 2.0, 0.0)).await.unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("\"shared/\""), "{}", denied.message());
    assert!(beta.acquire(acquire_req("shared/y", 2.0, 0.0)).await.unwrap().acquired);
    // Alpha may, and its lease names the resource as asked.
    let granted = client
        .acquire(authed(acquire_req("alpha/x", 2.0, 0.0), ALPHA))
        .await
        .unwrap()
        .into_inner();
    let lease = granted.lease.expect("alpha may lock alpha/");
    assert_eq!(lease.resource, "alpha/x");
    // Beta cannot release it, even with the value: it is not beta's lock.
    let steal = ReleaseRequest {
        resource: "alpha/x".into(),
        value: lease.value.clone(),
    };
    assert_eq!(
        client.release(authed(steal.clone(), BETA)).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert!(
        client
            .release(authed(steal, ALPHA))
            .await
            .unwrap()
            .into_inner()
            .released
    );
    daemon.stop().await;
}

async fn take_shared(client: &mut LockClient<Channel>, token: &str) -> redlockd_client::proto::AcquireResponse {
    let request = authed(acquire_req("shared/orders", 5.0, 0.0), token);
    client.acquire(request).await.unwrap().into_inner()
}

#[tokio::test]
async fn two_tenants_with_the_same_resource_name_hold_different_locks() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    // Master 0 is read below: it must have been in the rounds.
    daemon.until_usable(1).await;
    let mut client = daemon.client().await;
    let alpha = take_shared(&mut client, ALPHA).await;
    let beta = take_shared(&mut client, BETA).await;
    assert!(alpha.acquired && beta.acquired, "{alpha:?} {beta:?}");
    // Each tenant's own lock still excludes that tenant.
    assert!(
        !take_shared(&mut client, ALPHA).await.acquired,
        "alpha took its own lock twice"
    );
    let admin = cluster.admin(0).await;
    for tenant in ["alpha", "beta"] {
        let key = support::keys::lock(&format!("tenant:{tenant}:lock:shared/orders"));
        let exists: i64 = admin.exists(key.as_str()).await.unwrap();
        assert_eq!(exists, 1, "{key} is missing");
    }
    let exists: i64 = admin.exists(support::keys::of("shared/orders")).await.unwrap();
    assert_eq!(exists, 0, "an un-namespaced key was written");
    // Beta presenting alpha's value on the same name touches only its own key.
    let alpha_lease = alpha.lease.unwrap();
    let cross = ReleaseRequest {
        resource: "shared/orders".into(),
        value: alpha_lease.value.clone(),
    };
    assert!(!client.release(authed(cross, BETA)).await.unwrap().into_inner().released);
    let exists: i64 = admin
        .exists(support::keys::lock("tenant:alpha:lock:shared/orders"))
        .await
        .unwrap();
    assert_eq!(exists, 1, "beta released alpha's lock");
    let _ = admin.quit().await;
    daemon.stop().await;
}

/// The `redlockd` user's rule in deploy/redis-masters.yaml, with the
/// password hash swapped for a plain password.
fn deployed_acl(password: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/redis-masters.yaml")).unwrap();
    let rule = manifest
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("user redlockd "))
        .expect("deploy/redis-masters.yaml defines the redlockd ACL user");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    let permissions = rule.split_once("#$hash ").expect("the rule sets a password hash").1;
    assert!(
        docs.contains(permissions),
        "docs/configuration.md must document the same ACL as deploy/: {permissions}"
    );
    let mut args = vec!["--user".to_owned(), "default".into(), "off".into(), "--user".into()];
    args.extend(rule.trim_start_matches("user ").split_whitespace().map(|word| {
        if word == "#$hash" {
            format!(">{password}")
        } else {
            word.to_owned()
        }
    }));
    args
}

/// Masters running exactly the ACL of deploy/ (default user off), the daemon
/// logging in as `redlockd`; `wrong` get a wrong password.
async fn daemon_under_acl(cluster: &Cluster, wrong: &[usize]) -> Daemon {
    let urls: Vec<String> = cluster
        .masters
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let password = if wrong.contains(&i) { "wrong" } else { "s3cret" };
            format!("redis://redlockd:{password}@127.0.0.1:{}", m.port())
        })
        .collect();
    let mut env = test_env(cluster);
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    // The admin calls too, without tokens (loopback).
    env.insert("REDLOCKD__ADMIN__ALLOW_UNAUTHENTICATED".into(), "true".into());
    Daemon::start_with(env).await
}

#[tokio::test]
async fn the_deployed_acl_serves_every_call_and_wrong_passwords_count_as_failed_nodes() {
    let binary = redlockd::dev::find_redis_server().unwrap();
    let acl = deployed_acl("s3cret");
    let args: Vec<&str> = acl.iter().map(String::as_str).collect();
    let masters = (0..5)
        .map(|_| redlockd::dev::RedisProcess::start(&binary, &args).unwrap())
        .collect();
    let cluster = Cluster::of(masters);

    // One wrong password: that master fails, the other four serve every call.
    let daemon = daemon_under_acl(&cluster, &[4]).await;
    let mut client = daemon.client().await;
    let lease = must_acquire(&mut client, "acl", 2.0, 0.0).await;
    let extend = ExtendRequest {
        resource: "acl".into(),
        value: lease.value.clone(),
        ttl: secs(2.0),
    };
    assert!(client.extend(extend).await.unwrap().into_inner().extended);
    let view = client
        .inspect(InspectRequest { resource: "acl".into() })
        .await
        .expect("Inspect runs under the ACL")
        .into_inner();
    assert!(view.held && view.agreeing == 4, "{view:?}");
    assert!(view.nodes[..4].iter().all(|n| n.reachable && n.held));
    assert!(
        !view.nodes[4].reachable,
        "the master with the wrong password: {:?}",
        view.nodes[4]
    );
    // The admin calls: ListLocks scans, ForceRelease deletes and announces.
    let mut admin = redlockd_client::proto::admin_client::AdminClient::new(daemon.channel().await);
    let listed = admin
        .list_locks(redlockd_client::proto::ListLocksRequest {
            prefix: "acl".into(),
            page_size: 10,
            page_token: String::new(),
        })
        .await
        .expect("ListLocks runs under the ACL")
        .into_inner();
    let names: Vec<&str> = listed.locks.iter().map(|l| l.resource.as_str()).collect();
    assert_eq!(names, ["acl"]);
    let forced = must_acquire(&mut client, "forced", 2.0, 0.0).await;
    let reply = admin
        .force_release(redlockd_client::proto::ForceReleaseRequest {
            resource: "forced".into(),
            reason: "the ACL test".into(),
        })
        .await
        .expect("ForceRelease runs under the ACL")
        .into_inner();
    assert_eq!(reply.masters_held, 4);
    assert!(!release(&mut client, &forced).await);
    // Shared locks: their scripts (sorted sets, PEXPIREAT) run under it too.
    let shared = |resource: &str| redlockd_client::proto::AcquireRequest {
        mode: redlockd_client::proto::LockMode::Shared.into(),
        ..acquire_req(resource, 2.0, 0.0)
    };
    let reader = client.acquire(shared("read")).await.unwrap().into_inner();
    let reader = reader
        .lease
        .filter(|_| reader.acquired)
        .expect("a shared lock under the ACL");
    let extend = ExtendRequest {
        resource: "read".into(),
        value: reader.value.clone(),
        ttl: secs(2.0),
    };
    assert!(client.extend(extend).await.unwrap().into_inner().extended);
    let view = client
        .inspect(InspectRequest {
            resource: "read".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(view.held && view.readers == 1 && view.agreeing == 4, "{view:?}");
    assert!(release(&mut client, &reader).await);
    // Permits: the agreement (EXISTS) and the extension of a permit.
    let permit = must_acquire_with(
        &mut client,
        redlockd_client::proto::AcquireRequest {
            permits: 2,
            ..acquire_req("pool", 2.0, 0.0)
        },
    )
    .await;
    let extend = ExtendRequest {
        resource: "pool".into(),
        value: permit.value.clone(),
        ttl: secs(2.0),
    };
    assert!(client.extend(extend).await.unwrap().into_inner().extended);
    assert!(release(&mut client, &permit).await);
    // A set.
    let request = redlockd_client::proto::AcquireManyRequest {
        resources: vec!["s1".into(), "s2".into()],
        ttl: secs(2.0),
        ..Default::default()
    };
    let reply = client.acquire_many(request).await.unwrap().into_inner();
    assert!(reply.acquired && reply.leases.len() == 2, "{reply:?}");
    assert!(release(&mut client, &lease).await);
    // A waiter is woken by the release published under the ACL.
    let first = must_acquire(&mut client, "acl-wake", 2.0, 0.0).await;
    let waiting = {
        let mut client = client.clone();
        tokio::spawn(async move { try_acquire(&mut client, "acl-wake", 2.0, 5.0).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(release(&mut client, &first).await);
    assert!(waiting.await.unwrap().acquired);
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    // Once the others were probed usable, the master with the wrong
    // password is still shown as out.
    daemon
        .scrape_until(&[
            "redlock_node_state{node=\"0\",state=\"usable\"} 1",
            "redlock_node_state{node=\"3\",state=\"usable\"} 1",
            "redlock_node_state{node=\"4\",state=\"unverified\"} 1",
        ])
        .await;
    daemon.stop().await;

    // Three wrong: no quorum, and health says so.
    let daemon = daemon_under_acl(&cluster, &[2, 3, 4]).await;
    daemon.until_health(ServingStatus::NotServing).await;
    let status = daemon
        .client()
        .await
        .acquire(acquire_req("acl", 2.0, 0.0))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn a_flood_of_waiters_and_sessions_is_refused_while_other_clients_are_served() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__LOCK__MAX_WAITERS_PER_RESOURCE", "40".into()),
            ("REDLOCKD__LOCK__MAX_WAITERS", "60".into()),
            ("REDLOCKD__LOCK__MAX_SESSIONS", "30".into()),
        ],
    ))
    .await;
    let mut client = daemon.client().await;
    let holder = must_acquire(&mut client, "hot", 10.0, 0.0).await;
    // 200 waiters on the held resource, 200 sessions on others.
    let mut waiters = Vec::new();
    for _ in 0..200 {
        let mut client = client.clone();
        waiters.push(tokio::spawn(async move {
            client
                .acquire(acquire_req("hot", 2.0, 8.0))
                .await
                .map(|r| r.into_inner())
        }));
    }
    let mut sessions = Vec::new();
    for i in 0..200 {
        let mut client = client.clone();
        sessions.push(tokio::spawn(async move {
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            tx.send(hold_start(&format!("session-{i}"))).await.unwrap();
            let outcome = match client.hold(tokio_stream::wrappers::ReceiverStream::new(rx)).await {
                Err(status) => Err(status.code()),
                Ok(response) => {
                    let mut stream = response.into_inner();
                    match stream.message().await {
                        Err(status) => Err(status.code()),
                        Ok(_) => Ok(()),
                    }
                }
            };
            (outcome, tx)
        }));
    }
    // Meanwhile an unrelated client is served, every time.
    let mut other = daemon.client().await;
    for round in 0..20 {
        let lease = must_acquire(&mut other, &format!("cold-{round}"), 2.0, 0.0).await;
        assert!(release(&mut other, &lease).await);
    }
    assert!(release(&mut client, &holder).await);
    let mut exhausted = 0;
    for waiter in waiters {
        match waiter.await.unwrap() {
            Err(status) if status.code() == Code::ResourceExhausted => {
                assert!(status.message().contains("max_waiters"), "{}", status.message());
                exhausted += 1;
            }
            Err(status) => panic!("a waiter failed otherwise: {status:?}"),
            Ok(_) => {}
        }
    }
    assert!(
        exhausted >= 160,
        "only {exhausted} of 200 waiters were refused with 40 allowed"
    );
    let mut refused_sessions = 0;
    let mut open = Vec::new();
    for session in sessions {
        let (outcome, tx) = session.await.unwrap();
        match outcome {
            Err(Code::ResourceExhausted) => refused_sessions += 1,
            Err(code) => panic!("a session failed otherwise: {code:?}"),
            Ok(()) => open.push(tx),
        }
    }
    assert_eq!(refused_sessions, 170, "30 sessions allowed of 200");
    drop(open);
    daemon.stop().await;
}

#[tokio::test]
async fn oversized_messages_are_refused_before_decoding_and_the_daemon_serves_on() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let huge = AcquireRequest {
        owner: "x".repeat(8 * 1024),
        ..acquire_req("big", 2.0, 0.0)
    };
    let status = client.acquire(huge).await.unwrap_err();
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");
    assert!(status.message().contains("4096"), "{}", status.message());
    let lease = must_acquire(&mut client, "big", 2.0, 0.0).await;
    assert!(release(&mut client, &lease).await);
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
