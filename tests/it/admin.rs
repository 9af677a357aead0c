//! The operator's tools against real masters: fence-safe
//! `Admin/ForceRelease`, the admin scope, bad input, redlockctl.
use std::time::Duration;

use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::{
    ExtendRequest, ForceReleaseRequest, HoldEvent, HoldRequest, HoldStart, ListLocksRequest, ReleaseRequest,
};
use tonic::{Code, Request, Status};

use crate::support::history::FencedStore;
use crate::support::tenants::{ALPHA, BETA, acquire, admin, authed, daemon_with_tenants, dur};
use crate::support::{Cluster, Daemon, test_env};

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

    // A grant answers at quorum, and a force release does not queue behind
    // the slowest master's grant (docs/design.md#batching): wait until
    // every master holds both, so that each one has a lock to delete.
    for resource in ["stuck", "held-by-session"] {
        let key = crate::support::keys::lock(&format!("tenant:alpha:lock:{resource}"));
        for i in 0..5 {
            let master = cluster.admin(i).await;
            let mut held = 0;
            for _ in 0..100 {
                held = fred::prelude::KeysInterface::exists::<i64, _>(&master, key.as_str())
                    .await
                    .unwrap();
                if held == 1 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(held, 1, "master {i} never held {resource}");
        }
    }
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
