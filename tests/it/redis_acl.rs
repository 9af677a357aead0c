//! Redis ACL users against real masters: a user in the node's URL under the
//! rule src/redis/acl.rs declares (docs/configuration.md#redis-acl), the
//! daemon under exactly the rule deploy/ writes, where a wrong password is a
//! failed node, and cluster positions under the cluster rule. Every call is
//! served, and `ACL LOG` shows that nothing was denied on the way.

use crate::support;

use std::process::Command;
use std::time::Duration;

use fred::prelude::ClientLike;
use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::Probed;
use redlockd::redlock::{Announce, Extension, LockValue, Node};
use redlockd_client::proto::{ExtendRequest, InspectRequest};
use support::redis_node::{KEY, TTL, node, node_config};
use support::*;
use tonic::Code;

#[tokio::test]
async fn an_acl_user_in_the_url_works_and_a_wrong_password_is_a_node_error() {
    let binary = find_redis_server().unwrap();
    // The rule src/redis/acl.rs declares, for another user name.
    let rule = redlockd::redis::acl::rule("redlockd", false);
    let mut args = vec!["--user", "default", "off", "--user", "locker", "on", ">s3cret"];
    args.extend(rule.split_whitespace());
    let master = RedisProcess::start(&binary, &args).unwrap();
    let port = master.port();
    let good = node(format!("redis://locker:s3cret@127.0.0.1:{port}")).await;
    let seen = good.probe().await.expect("the monitor's probe runs under the rule");
    assert_eq!(
        (seen.role.as_str(), seen.maxmemory_policy.as_str()),
        ("master", "noeviction")
    );
    assert_eq!(seen.scripts_loaded, Ok(()));
    let value = LockValue::random();
    assert!(
        good.try_lock(KEY.as_str(), value.expose(), TTL, "")
            .await
            .unwrap()
            .is_some()
    );
    let extension = Extension {
        key: KEY.as_str(),
        value: value.expose(),
        ttl: TTL,
    };
    assert_eq!(good.extend(&[extension]).await.unwrap(), [true]);

    let bad = RedisNode::connect(&node_config(format!("redis://locker:wrong@127.0.0.1:{port}"))).unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        bad.unlock(KEY.as_str(), value.expose(), Announce::IfWaited),
    )
    .await;
    // An error, never "not held": the lock is still there.
    assert!(matches!(outcome, Ok(Err(_)) | Err(_)), "{outcome:?}");
    assert!(
        good.unlock(KEY.as_str(), value.expose(), Announce::IfWaited)
            .await
            .unwrap()
    );
    let _ = good.client().quit().await;
}

/// The `redlockd` user's rule in deploy/redis-masters.yaml, with the
/// password hash swapped for a plain password, and a user `admin` (password
/// `admin`) that may read `ACL LOG`.
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
    let mut args: Vec<String> = [
        "--user", "default", "off", "--user", "admin", "on", ">admin", "+@all", "--user",
    ]
    .map(str::to_owned)
    .into();
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

/// Every kind of call through `daemon`, each served by the first
/// `agreeing` positions: acquire, extend, inspect, list, force-release, a
/// shared lock, a permit, a set, and a waiter woken by a published release.
async fn every_call(daemon: &Daemon, agreeing: usize) {
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
    assert!(view.held && view.agreeing as usize == agreeing, "{view:?}");
    assert!(view.nodes[..agreeing].iter().all(|n| n.reachable && n.held));
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
    assert_eq!(reply.masters_held as usize, agreeing);
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
    assert!(
        view.held && view.readers == 1 && view.agreeing as usize == agreeing,
        "{view:?}"
    );
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
}

/// What `ACL LOG` on the server at `port` (user `admin`, password `admin`)
/// says user `redlockd` was denied: `reason object` per entry (failed
/// logins, reason `auth`, apart).
fn denials(port: u16) -> Vec<String> {
    let out = Command::new("redis-cli")
        .args([
            "-p",
            &port.to_string(),
            "--user",
            "admin",
            "--pass",
            "admin",
            "--no-auth-warning",
            "acl",
            "log",
        ])
        .output()
        .expect("redis-cli");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && !text.starts_with("NOPERM"), "ACL LOG: {text}");
    let lines: Vec<&str> = text.lines().collect();
    let mut entries: Vec<Vec<(&str, &str)>> = Vec::new();
    for pair in lines.chunks(2) {
        if let [key, value] = pair {
            if *key == "count" {
                entries.push(Vec::new());
            }
            if let Some(entry) = entries.last_mut() {
                entry.push((*key, *value));
            }
        }
    }
    let field =
        |entry: &[(&str, &str)], name: &str| entry.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned());
    entries
        .iter()
        .filter(|e| {
            field(e, "username").as_deref() == Some("redlockd") && field(e, "reason").as_deref() != Some("auth")
        })
        .map(|e| {
            format!(
                "{} {}",
                field(e, "reason").unwrap_or_default(),
                field(e, "object").unwrap_or_default()
            )
        })
        .collect()
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
    every_call(&daemon, 4).await;
    let mut client = daemon.client().await;
    let view = (client.inspect(InspectRequest { resource: "acl".into() }).await)
        .unwrap()
        .into_inner();
    assert!(view.nodes[..4].iter().all(|n| n.reachable), "{view:?}");
    assert!(
        !view.nodes[4].reachable,
        "the master with the wrong password: {:?}",
        view.nodes[4]
    );
    // Nothing the daemon sent was refused on the way (fred's own commands
    // included: a refused CLIENT ID costs nothing but shows here).
    for master in &cluster.masters {
        assert_eq!(denials(master.port()), Vec::<String>::new(), "master {}", master.port());
    }
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

/// Cluster positions under the cluster rule src/redis/acl.rs declares (the
/// standalone one is not enough: fred checks `CLUSTER INFO` on every
/// connection and reads the slot map, repair runs `EVAL`, releases are
/// `SPUBLISH`ed): every call served, nothing denied on any primary.
#[tokio::test]
async fn cluster_positions_serve_every_call_under_the_cluster_rule() {
    let clusters = support::clusters::start_clusters(3, 3, 0);
    let rule = redlockd::redis::acl::rule("redlockd", true);
    for node in clusters.iter().flat_map(|c| &c.nodes) {
        let port = node.port();
        let mut setuser = vec!["acl", "setuser", "redlockd", "on", ">s3cret"];
        setuser.extend(rule.split_whitespace());
        assert_eq!(support::clusters::cli(port, &setuser).trim(), "OK");
        let admin = ["acl", "setuser", "admin", "on", ">admin", "+@all"];
        assert_eq!(support::clusters::cli(port, &admin).trim(), "OK");
    }
    let urls: Vec<String> = (clusters.iter())
        .map(|c| {
            c.url()
                .replacen("redis-cluster://", "redis-cluster://redlockd:s3cret@", 1)
        })
        .collect();
    let mut env = test_env(&Cluster::of(Vec::new()));
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    env.insert("REDLOCKD__ADMIN__ALLOW_UNAUTHENTICATED".into(), "true".into());
    let daemon = Daemon::start_with(env).await;
    every_call(&daemon, 3).await;
    daemon.stop().await;
    for node in clusters.iter().flat_map(|c| &c.nodes) {
        assert_eq!(denials(node.port()), Vec::<String>::new(), "primary {}", node.port());
    }
}
