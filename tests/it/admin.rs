//! Who holds what, and the operator's tools, against real masters:
//! `Inspect`'s holder and waiters, `Admin/ListLocks` paging, fence-safe
//! `Admin/ForceRelease`, the admin scope, per-tenant quotas, and bad input.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt;
use redlockd_client::proto::admin_client::AdminClient;
use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{
    AcquireRequest, ExtendRequest, ForceReleaseRequest, HoldEvent, HoldRequest, HoldStart, InspectRequest,
    ListLocksRequest, ListLocksResponse, ReleaseRequest,
};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

use crate::support::certs::Pki;
use crate::support::history::FencedStore;
use crate::support::{Cluster, Daemon, test_env};

const ALPHA: &str = "alpha-token-0123456789abcdef0123";
const BETA: &str = "beta-token-0123456789abcdef01234";

fn dur(ms: u64) -> Option<prost_types::Duration> {
    Some(redlockd_client::wire_duration(Duration::from_millis(ms)))
}

fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

/// A daemon with tenant `alpha` (admin, every resource) and `beta` (not
/// admin, with `beta_quota` as its quota table).
async fn daemon_with_tenants(cluster: &Cluster, dir: &std::path::Path, beta_quota: &str) -> Daemon {
    let file = dir.join("tenants.toml");
    std::fs::write(
        &file,
        format!(
            "[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"\"]\nscopes = [\"admin\"]\n\n\
             [[tenant]]\nname = \"beta\"\ntoken = \"{BETA}\"\nprefixes = [\"\"]\n{beta_quota}\n"
        ),
    )
    .unwrap();
    let mut env = test_env(cluster);
    env.insert(
        "REDLOCKD__AUTH__TOKENS_FILE".into(),
        file.to_string_lossy().into_owned(),
    );
    Daemon::start_with(env).await
}

async fn admin(daemon: &Daemon) -> AdminClient<Channel> {
    AdminClient::new(daemon.channel().await)
}

fn acquire(resource: &str, ttl_ms: u64, owner: &str) -> AcquireRequest {
    AcquireRequest {
        resource: resource.into(),
        ttl: dur(ttl_ms),
        owner: owner.into(),
        ..AcquireRequest::default()
    }
}

#[tokio::test]
#[allow(
    clippy::disallowed_methods,
    reason = "`since` is a wall-clock time on the masters' clocks, which share this machine's"
)]
async fn inspect_names_the_holder_since_when_and_this_daemons_waiters() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let before = std::time::SystemTime::now();
    let lease = client
        .acquire(acquire("inspected", 30_000, "pod-a/job-7"))
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    // Two waiters queue in this daemon behind the holder.
    let mut waiting = Vec::new();
    for owner in ["second", "third"] {
        let mut c = client.clone();
        waiting.push(tokio::spawn(async move {
            c.acquire(AcquireRequest {
                wait: dur(20_000),
                ..acquire("inspected", 30_000, owner)
            })
            .await
        }));
        daemon.until_waiters(waiting.len()).await;
    }
    let view = client
        .inspect(InspectRequest {
            resource: "inspected".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let holder = view.holder.expect("a held lock names its holder");
    assert_eq!(holder.owner, "pod-a/job-7");
    assert_eq!(holder.tenant, "");
    assert!(!holder.daemon.is_empty());
    // From the records of every master holding it: the lease's token, or
    // above when a master that answered after the quorum granted a larger
    // counter (fresh masters seed theirs from their clocks).
    assert!(
        holder.fencing_token >= lease.fencing_token,
        "{} < {}",
        holder.fencing_token,
        lease.fencing_token
    );
    assert!(
        holder.fencing_token - lease.fencing_token < 16 * 10_000_000,
        "not this lock's token"
    );
    let since = holder.since.unwrap();
    let since = std::time::UNIX_EPOCH + Duration::new(since.seconds as u64, since.nanos as u32);
    let skew = Duration::from_secs(2);
    assert!(
        since + skew >= before && since <= std::time::SystemTime::now() + skew,
        "{since:?}"
    );
    let ttl = Duration::try_from(holder.ttl.unwrap()).unwrap();
    assert!(
        ttl > Duration::from_secs(20) && ttl <= Duration::from_secs(30),
        "{ttl:?}"
    );
    assert_eq!(view.waiting, 2);
    assert_eq!(view.waiter_owners, ["second", "third"]);
    // Released: no holder, and the first waiter holds it now.
    client
        .release(ReleaseRequest {
            resource: "inspected".into(),
            value: lease.value.clone(),
        })
        .await
        .unwrap();
    let second = waiting.remove(0).await.unwrap().unwrap().into_inner();
    assert!(second.acquired);
    let view = client
        .inspect(InspectRequest {
            resource: "inspected".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(view.holder.as_ref().unwrap().owner, "second");
    assert_eq!(view.waiter_owners, ["third"]);
    let debug = format!("{view:?}");
    assert!(!debug.contains(&lease.value), "Inspect showed a lock value");
    drop(waiting);
    daemon.stop().await;
}

/// Every page of `prefix` for `token`, in order.
async fn list_all(
    admin: &mut AdminClient<Channel>,
    token: &str,
    prefix: &str,
    page_size: u32,
) -> Vec<ListLocksResponse> {
    let mut pages = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = admin
            .list_locks(authed(
                ListLocksRequest {
                    prefix: prefix.into(),
                    page_size,
                    page_token: page_token.clone(),
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner();
        page_token = page.next_page_token.clone();
        pages.push(page);
        if page_token.is_empty() {
            return pages;
        }
    }
}

#[tokio::test]
async fn list_locks_pages_through_2500_locks_once_each_and_never_another_tenants() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), "").await;
    let client = daemon.client().await;
    let take = |token: &'static str, resource: String| {
        let mut client = client.clone();
        async move {
            let reply = client
                .acquire(authed(acquire(&resource, 60_000, "lister"), token))
                .await
                .unwrap()
                .into_inner();
            assert!(reply.acquired, "{resource}");
        }
    };
    let alpha: Vec<String> = (0..2500).map(|i| format!("jobs/{i:05}")).collect();
    futures::stream::iter(alpha.iter().cloned().map(|r| take(ALPHA, r)))
        .buffer_unordered(64)
        .collect::<Vec<()>>()
        .await;
    // The other tenant holds some of the same names, and alpha holds one
    // lock outside the prefix.
    futures::stream::iter((0..50).map(|i| take(BETA, format!("jobs/{i:05}"))))
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    futures::stream::iter([take(ALPHA, "other/1".into()), take(BETA, "jobs-beta-only".into())])
        .buffer_unordered(2)
        .collect::<Vec<()>>()
        .await;
    let mut admin = admin(&daemon).await;
    let pages = list_all(&mut admin, ALPHA, "jobs/", 300).await;
    let listed: Vec<String> = pages
        .iter()
        .flat_map(|p| p.locks.iter().map(|l| l.resource.clone()))
        .collect();
    assert!(pages.iter().all(|p| p.locks.len() <= 300), "a page over its size");
    let unique: HashSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "a lock listed twice");
    let want: HashSet<&String> = alpha.iter().collect();
    assert_eq!(unique, want, "gaps or strangers in the listing");
    for page in &pages {
        for lock in &page.locks {
            let holder = lock.holder.as_ref().unwrap();
            assert_eq!((holder.tenant.as_str(), holder.owner.as_str()), ("alpha", "lister"));
        }
    }
    // A small page size pages too; the prefix narrows.
    let pages = list_all(&mut admin, ALPHA, "jobs/0001", 7).await;
    let listed: Vec<String> = pages
        .iter()
        .flat_map(|p| p.locks.iter().map(|l| l.resource.clone()))
        .collect();
    assert_eq!(listed.len(), 10, "{listed:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn force_release_takes_the_lock_away_and_the_fence_rejects_the_old_holder() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), "").await;
    let mut client = daemon.client().await;
    let store = FencedStore::new("store");
    let old = client
        .acquire(authed(acquire("stuck", 30_000, "old"), ALPHA))
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    store.write("old", old.fencing_token, "before").unwrap();
    // A Hold session in this daemon on another lock, taken away too.
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(HoldRequest {
        request: Some(Ask::Start(HoldStart {
            resource: "held-by-session".into(),
            ttl: dur(30_000),
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
    assert_eq!(acquired.event(), HoldEvent::Acquired);

    let mut admin = admin(&daemon).await;
    for resource in ["stuck", "held-by-session"] {
        let reply = admin
            .force_release(authed(
                ForceReleaseRequest {
                    resource: resource.into(),
                    reason: "stuck job, ticket OPS-1".into(),
                },
                ALPHA,
            ))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reply.masters_held, 5, "{resource}");
    }
    // The session hears LOST at once, not at its next extension (10 s).
    let lost = tokio::time::timeout(Duration::from_secs(5), session.message())
        .await
        .expect("no LOST within 5 s of the force release")
        .unwrap()
        .unwrap();
    assert_eq!(lost.event(), HoldEvent::Lost, "{lost:?}");
    assert!(lost.reason.contains("ForceRelease"), "{}", lost.reason);
    drop(tx);

    // The old holder can neither extend nor release.
    let extended = client
        .extend(authed(
            ExtendRequest {
                resource: "stuck".into(),
                value: old.value.clone(),
                ttl: dur(30_000),
            },
            ALPHA,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(!extended.extended);
    let released = client
        .release(authed(
            ReleaseRequest {
                resource: "stuck".into(),
                value: old.value.clone(),
            },
            ALPHA,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(!released.released);
    // The next holder's token is larger, and the store now refuses the old.
    let new = client
        .acquire(authed(acquire("stuck", 30_000, "new"), ALPHA))
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("the lock is free after the force release");
    assert!(
        new.fencing_token > old.fencing_token,
        "{} <= {}",
        new.fencing_token,
        old.fencing_token
    );
    store.write("new", new.fencing_token, "after").unwrap();
    assert_eq!(store.write("old", old.fencing_token, "late"), Err(new.fencing_token));
    daemon.stop().await;
}

fn code_and_message(status: &Status) -> (Code, &str) {
    (status.code(), status.message())
}

#[tokio::test]
async fn admin_calls_need_the_admin_scope_and_bad_input_names_its_field() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), "").await;
    let mut admin = admin(&daemon).await;
    let list = |prefix: &str, page_size: u32, page_token: &str| ListLocksRequest {
        prefix: prefix.into(),
        page_size,
        page_token: page_token.into(),
    };
    let denied = admin.list_locks(authed(list("a", 10, ""), BETA)).await.unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("admin"), "{}", denied.message());
    let denied = admin
        .force_release(authed(
            ForceReleaseRequest {
                resource: "a".into(),
                reason: "r".into(),
            },
            BETA,
        ))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    let unauthenticated = admin.list_locks(Request::new(list("a", 10, ""))).await.unwrap_err();
    assert_eq!(unauthenticated.code(), Code::Unauthenticated);

    // A real token from a listing, for the forgery cases.
    let mut client = daemon.client().await;
    for i in 0..3 {
        let reply = client
            .acquire(authed(acquire(&format!("a{i}"), 30_000, ""), ALPHA))
            .await
            .unwrap();
        assert!(reply.into_inner().acquired);
    }
    let token = admin
        .list_locks(authed(list("a", 1, ""), ALPHA))
        .await
        .unwrap()
        .into_inner()
        .next_page_token;
    assert!(!token.is_empty());
    let mut flipped = token.clone().into_bytes();
    flipped[4] = if flipped[4] == b'0' { b'1' } else { b'0' };
    let flipped = String::from_utf8(flipped).unwrap();
    let long = "p".repeat(257);
    let cases: Vec<(ListLocksRequest, &str)> = vec![
        (list("", 10, ""), "prefix"),
        (list(&long, 10, ""), "prefix"),
        (list("a", 0, ""), "page_size"),
        (list("a", 1001, ""), "page_size"),
        (list("a", 10, "not-a-token"), "page_token"),
        (list("a", 10, &flipped), "page_token"),
        // A real token, for another prefix.
        (list("b", 10, &token), "page_token"),
    ];
    for (request, field) in cases {
        let status = admin.list_locks(authed(request.clone(), ALPHA)).await.unwrap_err();
        let (code, message) = code_and_message(&status);
        assert_eq!(code, Code::InvalidArgument, "{request:?}: {message}");
        assert!(message.contains(field), "{request:?}: {message} does not name {field}");
    }
    for (reason, resource, field) in [
        ("x".repeat(257), "a0".to_owned(), "reason"),
        (String::new(), "a0".to_owned(), "reason"),
        ("ok".to_owned(), String::new(), "resource"),
    ] {
        let status = admin
            .force_release(authed(ForceReleaseRequest { resource, reason }, ALPHA))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(field), "{}", status.message());
    }
    daemon.stop().await;
}

#[tokio::test]
async fn without_authentication_admin_calls_are_refused_unless_allowed_on_loopback() {
    let cluster = Cluster::start(3);
    let daemon = Daemon::start(&cluster).await;
    let list = ListLocksRequest {
        prefix: "a".into(),
        page_size: 10,
        page_token: String::new(),
    };
    let status = admin(&daemon).await.list_locks(list.clone()).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied);
    assert!(
        status.message().contains("admin.allow_unauthenticated"),
        "{}",
        status.message()
    );
    daemon.stop().await;

    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__ADMIN__ALLOW_UNAUTHENTICATED".into(), "true".into());
    let daemon = Daemon::start_with(env.clone()).await;
    let mut client = daemon.client().await;
    assert!(
        client
            .acquire(acquire("a1", 30_000, "dev"))
            .await
            .unwrap()
            .into_inner()
            .acquired
    );
    let listed = admin(&daemon).await.list_locks(list).await.unwrap().into_inner();
    assert_eq!(listed.locks.len(), 1);
    assert_eq!(listed.locks[0].resource, "a1");
    daemon.stop().await;

    // Never on an address others can reach.
    env.insert("REDLOCKD__SERVER__LISTEN".into(), "0.0.0.0:7420".into());
    let error = redlockd::config::Config::load(None, Some(env)).unwrap_err();
    assert!(error.0.contains("admin.allow_unauthenticated"), "{}", error.0);
}

/// The quota a RESOURCE_EXHAUSTED status names in its QuotaFailure.
fn quota_of(status: &Status) -> String {
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let failure = status.get_details_quota_failure().expect("a QuotaFailure detail");
    assert_eq!(failure.violations.len(), 1);
    assert_eq!(failure.violations[0].subject, "tenant:beta");
    failure.violations[0].quota_id.clone()
}

#[tokio::test]
async fn each_quota_refuses_with_resource_exhausted_and_names_itself() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let quota =
        "[tenant.quota]\nmax_locks_held = 2\nmax_waiters = 1\nmax_sessions = 1\nmax_acquires_per_second = 1000.0\n";
    let daemon = daemon_with_tenants(&cluster, dir.path(), quota).await;
    let mut client = daemon.client().await;
    let mut leases = Vec::new();
    for i in 0..2 {
        let reply = client
            .acquire(authed(acquire(&format!("q{i}"), 30_000, ""), BETA))
            .await
            .unwrap();
        leases.push(reply.into_inner().lease.unwrap());
    }
    let status = client
        .acquire(authed(acquire("q2", 30_000, ""), BETA))
        .await
        .unwrap_err();
    assert_eq!(quota_of(&status), "max_locks_held");
    assert!(status.message().contains("max_locks_held"), "{}", status.message());
    // Another tenant is not limited by beta's quota.
    assert!(
        client
            .acquire(authed(acquire("q2", 30_000, ""), ALPHA))
            .await
            .unwrap()
            .into_inner()
            .acquired
    );
    // Releasing one frees its unit.
    client
        .release(authed(
            ReleaseRequest {
                resource: "q0".into(),
                value: leases.remove(0).value,
            },
            BETA,
        ))
        .await
        .unwrap();
    // One waiter at most: the first waits (for q1, held), the second is refused.
    let mut waiter = client.clone();
    let first = tokio::spawn(async move {
        waiter
            .acquire(authed(
                AcquireRequest {
                    wait: dur(20_000),
                    ..acquire("q1", 30_000, "")
                },
                BETA,
            ))
            .await
    });
    daemon.until_waiters(1).await;
    let status = client
        .acquire(authed(
            AcquireRequest {
                wait: dur(5_000),
                ..acquire("q1", 30_000, "")
            },
            BETA,
        ))
        .await
        .unwrap_err();
    assert_eq!(quota_of(&status), "max_waiters");
    first.abort();
    // One session at most.
    let start = |resource: &str| {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tx.try_send(HoldRequest {
            request: Some(Ask::Start(HoldStart {
                resource: resource.into(),
                ttl: dur(10_000),
                ..HoldStart::default()
            })),
        })
        .unwrap();
        (tx, tokio_stream::wrappers::ReceiverStream::new(rx))
    };
    let (_keep, stream) = start("s1");
    let mut session = client.hold(authed(stream, BETA)).await.unwrap().into_inner();
    let event = session.message().await.unwrap().unwrap();
    assert_eq!(event.event(), HoldEvent::Acquired);
    let (_keep2, stream) = start("s2");
    let status = match client.hold(authed(stream, BETA)).await {
        Err(status) => status,
        Ok(reply) => reply.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(quota_of(&status), "max_sessions");
    daemon.stop().await;

    // The rate: a bucket of one second's worth.
    let quota = "[tenant.quota]\nmax_acquires_per_second = 3.0\n";
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), quota).await;
    let mut client = daemon.client().await;
    let mut refused = None;
    for i in 0..10 {
        match client.acquire(authed(acquire(&format!("r{i}"), 1_000, ""), BETA)).await {
            Ok(_) => {}
            Err(status) => {
                refused = Some((i, status));
                break;
            }
        }
    }
    let (i, status) = refused.expect("10 acquisitions at once passed a rate of 3 per second");
    assert!(i >= 3, "refused after {i}");
    assert_eq!(quota_of(&status), "max_acquires_per_second");
    daemon.stop().await;
}

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

#[tokio::test]
async fn audit_lines_appear_once_per_event_with_the_tls_subject_and_no_log_line_holds_a_lock_value() {
    let cluster = Cluster::start(3);
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
    let mut env = test_env(&cluster);
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
        ("REDLOCKD__LOG__FILTER", "debug".into()),
    ] {
        env.insert(key.into(), value);
    }
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockd"))
        .envs(&env)
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
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
        (3, 2, 2, 1, 1),
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

/// Runs redlockctl against `daemon` as `token`; (exit code, stdout, stderr).
async fn ctl(daemon: &Daemon, token: &str, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_redlockctl"))
        .arg("--addr")
        .arg(format!("http://{}", daemon.addr))
        .args(args)
        .env("REDLOCKD_TOKEN", token)
        .output()
        .await
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[tokio::test]
async fn redlockctl_lists_locks_page_by_page_and_force_releases_one() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_with_tenants(&cluster, dir.path(), "").await;
    let mut client = daemon.client().await;
    for i in 0..5 {
        let reply = client
            .acquire(authed(
                acquire(&format!("ctl/{i}"), 30_000, &format!("owner {i}")),
                ALPHA,
            ))
            .await
            .unwrap();
        assert!(reply.into_inner().acquired);
    }
    let (code, out, err) = ctl(&daemon, ALPHA, &["locks", "ls", "--prefix", "ctl/", "--page-size", "2"]).await;
    assert_eq!(code, 0, "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(
        lines[3].starts_with("resource=ctl/3 owner=\"owner 3\" tenant=alpha "),
        "{}",
        lines[3]
    );
    let (code, out, err) = ctl(&daemon, ALPHA, &["force-release", "ctl/3", "--reason", "stuck"]).await;
    assert_eq!((code, out.trim()), (0, "masters_held=3"), "{err}");
    let (_, out, _) = ctl(&daemon, ALPHA, &["locks", "ls", "--prefix", "ctl/"]).await;
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(!out.contains("ctl/3"), "{out}");
    // A tenant without the scope: a gRPC error, exit 2.
    let (code, _, err) = ctl(&daemon, BETA, &["locks", "ls", "--prefix", "ctl/"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("PermissionDenied"), "{err}");
    daemon.stop().await;
}

#[tokio::test]
async fn list_locks_skips_a_dead_master_and_still_lists_each_lock_once() {
    let mut cluster = Cluster::start(5);
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__ADMIN__ALLOW_UNAUTHENTICATED".into(), "true".into());
    let daemon = Daemon::start_with(env).await;
    let mut client = daemon.client().await;
    let want: Vec<String> = (0..40).map(|i| format!("dead/{i:02}")).collect();
    for resource in &want {
        assert!(
            client
                .acquire(acquire(resource, 30_000, ""))
                .await
                .unwrap()
                .into_inner()
                .acquired
        );
    }
    // The first master, where every lock would be listed, dies.
    cluster.masters[0].kill();
    let mut admin = admin(&daemon).await;
    let mut listed = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = admin
            .list_locks(ListLocksRequest {
                prefix: "dead/".into(),
                page_size: 15,
                page_token,
            })
            .await
            .unwrap()
            .into_inner();
        listed.extend(page.locks.into_iter().map(|l| l.resource));
        page_token = page.next_page_token;
        if page_token.is_empty() {
            break;
        }
    }
    listed.sort();
    assert_eq!(listed, want, "a lock missed or listed twice with a master down");
    // With a majority down nothing can be said.
    for i in 1..3 {
        cluster.masters[i].kill();
    }
    let status = admin
        .list_locks(ListLocksRequest {
            prefix: "dead/".into(),
            page_size: 15,
            page_token: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    daemon.stop().await;
}
