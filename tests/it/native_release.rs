//! Releases by the server's own `DELIFEQ` (docs/design.md#native-release),
//! on one real standalone master: used where the server has it (Valkey 9
//! and later, `INFO`'s `valkey_version`) and never elsewhere, with the same
//! outcomes as `ROUND`'s release — a value stored otherwise is still
//! released (by `ROUND`), another holder's lock is never deleted, a waited
//! release is announced and its mark cleared, and a user whose ACL rule
//! lacks `DELIFEQ` releases by script.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use fred::prelude::{Client, ClientLike, EventInterface, KeysInterface, PubsubInterface, Value};
use fred::types::{ClusterHash, CustomCommand};
use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd::redlock::{Announce, LockValue, Node};
use support::redis_node::{TTL, node};

/// `INFO commandstats`: calls by command, after `CONFIG RESETSTAT`.
async fn calls(admin: &Client) -> BTreeMap<String, u64> {
    let info: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    (info.lines())
        .filter_map(|l| l.strip_prefix("cmdstat_")?.split_once(':'))
        .map(|(name, fields)| {
            let calls = fields.split(',').find_map(|f| f.strip_prefix("calls=")).unwrap_or("0");
            (name.to_owned(), calls.parse().unwrap())
        })
        .collect()
}

async fn reset(admin: &Client) {
    let config = CustomCommand::new_static("CONFIG", ClusterHash::FirstKey, false);
    let _: Value = admin.custom(config, vec!["RESETSTAT"]).await.unwrap();
}

/// Whether the server has `DELIFEQ` (Valkey 9 or later).
async fn has_delifeq(admin: &Client) -> bool {
    let info: String = admin.info(Some(fred::types::InfoKind::Server)).await.unwrap();
    (info.lines())
        .find_map(|l| l.strip_prefix("valkey_version:"))
        .and_then(|v| v.split('.').next()?.trim().parse::<u32>().ok())
        .is_some_and(|major| major >= 9)
}

/// A lock on `name` taken through `node`: its key and value.
async fn locked(node: &impl Node, name: &str) -> (String, LockValue) {
    let (key, value) = (support::keys::of(name), LockValue::random());
    let granted = node.try_lock(&key, value.expose(), TTL, "d\nt\nowner").await.unwrap();
    assert!(granted.is_some(), "{name} was not granted");
    (key, value)
}

#[tokio::test]
async fn a_release_goes_by_delifeq_exactly_where_the_server_has_it() {
    let cluster = support::Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let native = has_delifeq(&admin).await;
    let (key, value) = locked(&node, "n").await;
    reset(&admin).await;
    assert!(node.unlock(&key, value.expose(), Announce::IfWaited).await.unwrap());
    let exists: bool = admin.exists(&key).await.unwrap();
    assert!(!exists, "the lock is still there");
    let ran = calls(&admin).await;
    let (delifeq, evalsha) = (ran.get("delifeq").copied(), ran.get("evalsha").copied());
    if native {
        // One DELIFEQ and one EXISTS of the waiting mark; no script.
        assert_eq!((delifeq, evalsha), (Some(1), None), "{ran:?}");
    } else {
        assert_eq!((delifeq, evalsha), (None, Some(1)), "{ran:?}");
    }
}

#[tokio::test]
async fn a_value_stored_otherwise_is_released_by_round_and_another_holders_never() {
    let cluster = support::Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    // The record rewritten behind the daemon's back (as a re-grant or a
    // repair may): DELIFEQ finds another string, ROUND's prefix matches.
    let (key, value) = locked(&node, "rewritten").await;
    let other_record = format!("{}\n1\n2\nelsewhere", value.expose());
    let _: Value = admin.set(&key, other_record, None, None, false).await.unwrap();
    assert!(node.unlock(&key, value.expose(), Announce::IfWaited).await.unwrap());
    let exists: bool = admin.exists(&key).await.unwrap();
    assert!(!exists, "the lock is still there");
    // Another holder took the key after ours was gone: never deleted.
    let (key, ours) = locked(&node, "taken").await;
    let _: i64 = admin.del(&key).await.unwrap();
    let theirs = LockValue::random();
    assert!(node.try_lock(&key, theirs.expose(), TTL, "").await.unwrap().is_some());
    assert!(!node.unlock(&key, ours.expose(), Announce::IfWaited).await.unwrap());
    let held: Option<String> = admin.get(&key).await.unwrap();
    assert!(
        held.is_some_and(|h| h.starts_with(theirs.expose())),
        "their lock was deleted"
    );
}

#[tokio::test]
async fn a_waited_release_is_announced_and_its_mark_cleared() {
    let cluster = support::Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let (key, value) = locked(&node, "w").await;
    // A refused attempt marks the lock as waited for.
    let refused = node
        .try_lock(&key, LockValue::random().expose(), TTL, "")
        .await
        .unwrap();
    assert_eq!(refused, None);
    let waiting = support::keys::beside("lock:w", "waiting:");
    let marked: bool = admin.exists(&waiting).await.unwrap();
    assert!(marked, "no waiting mark at {waiting}");
    let subscriber = cluster.admin(0).await;
    let mut messages = subscriber.message_rx();
    subscriber
        .subscribe(redlockd::redis::scripts::released_channel(&key))
        .await
        .unwrap();
    assert!(node.unlock(&key, value.expose(), Announce::IfWaited).await.unwrap());
    let message = tokio::time::timeout(Duration::from_secs(5), messages.recv()).await;
    let announced = message.expect("no announcement").unwrap().value.as_string();
    assert_eq!(announced.as_deref(), Some(key.as_str()));
    let marked: bool = admin.exists(&waiting).await.unwrap();
    assert!(!marked, "the waiting mark is still there");
    // Announced never: no message, the mark (none here) untouched.
    let (key, value) = locked(&node, "quiet").await;
    assert!(node.unlock(&key, value.expose(), Announce::No).await.unwrap());
    let late = tokio::time::timeout(Duration::from_millis(300), messages.recv()).await;
    assert!(late.is_err(), "a release announced never was published: {late:?}");
}

#[tokio::test]
async fn a_user_whose_rule_lacks_delifeq_releases_by_script() {
    let binary = find_redis_server().unwrap();
    let rule = redlockd::redis::acl::rule("redlockd", false);
    let mut args = vec![
        "--user", "default", "off", "--user", "admin", "on", ">adm", "~*", "&*", "+@all",
    ];
    // `resetchannels`: Redis 6.2 starts a user with every channel.
    args.extend(["--user", "locker", "on", ">s3cret", "resetchannels"]);
    args.extend(rule.split_whitespace());
    let master = RedisProcess::start(&binary, &args).unwrap();
    let port = master.port();
    let admin = Client::new(
        fred::prelude::Config::from_url(&format!("redis://admin:adm@127.0.0.1:{port}")).unwrap(),
        None,
        None,
        None,
    );
    admin.init().await.unwrap();
    let native = has_delifeq(&admin).await;
    let node = node(format!("redis://locker:s3cret@127.0.0.1:{port}")).await;
    for name in ["first", "second", "third"] {
        let (key, value) = locked(&node, name).await;
        assert!(
            node.unlock(&key, value.expose(), Announce::IfWaited).await.unwrap(),
            "{name}"
        );
        let exists: bool = admin.exists(&key).await.unwrap();
        assert!(!exists, "{name} is still there");
    }
    // Only the first release tried DELIFEQ: refused (NOPERM), the path is
    // off until the next connection.
    let acl = CustomCommand::new_static("ACL", ClusterHash::FirstKey, false);
    let log: Value = admin.custom(acl, vec!["LOG"]).await.unwrap();
    let refused = denials(&log, "delifeq");
    assert_eq!(refused, u64::from(native), "ACL LOG: {log:?}");
}

/// How many times `ACL LOG` says `command` was denied (its entries'
/// `count`).
fn denials(log: &Value, command: &str) -> u64 {
    let Value::Array(entries) = log else {
        return 0;
    };
    let mut total = 0;
    for entry in entries {
        let fields: Vec<(String, Value)> = match entry {
            Value::Array(flat) => (flat.chunks(2))
                .filter_map(|kv| Some((kv[0].as_string()?, kv.get(1)?.clone())))
                .collect(),
            Value::Map(map) => (map.clone().inner().iter())
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.clone())))
                .collect(),
            _ => continue,
        };
        let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        if field("object").and_then(|o| o.as_string()).as_deref() == Some(command) {
            total += field("count").and_then(|c| c.as_u64()).unwrap_or(0);
        }
    }
    total
}
