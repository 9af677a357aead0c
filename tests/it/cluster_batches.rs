//! Round-1 batches on cluster positions go one script call per primary
//! (docs/design.md#cluster-positions): every slot a primary serves shares
//! the call, a request whose slot moved is sent again by slot, and a
//! reshard under load with those batches keeps the history checker green.

use std::collections::HashSet;
use std::time::Duration;

use redlockd::dev::RedisProcess;
use redlockd::redis::node::RedisNode;
use redlockd::redlock::node::{Announce, NodeError, Probed};
use redlockd::redlock::{LockValue, Node, buckets};
use tokio::time::{Instant, sleep};

use crate::cluster_faults::cluster_rig;
use crate::support::clusters::{RedisCluster, cli};
use crate::support::keys;
use crate::support::redis_node::{TTL, node};

/// `calls=` of `command` in the `INFO commandstats` of the node at `port`.
fn calls(port: u16, command: &str) -> u64 {
    let stats = cli(port, &["info", "commandstats"]);
    let prefix = format!("cmdstat_{command}:calls=");
    (stats.lines())
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
}

/// `n` lock names whose slots `keep` accepts, each in a slot of its own.
fn names_where(n: usize, keep: impl Fn(u16) -> bool) -> Vec<String> {
    let mut slots = HashSet::new();
    (0..)
        .map(|i| format!("b{i}"))
        .filter(|name| {
            let slot = buckets::slot(&keys::of(name));
            keep(slot) && slots.insert(slot)
        })
        .take(n)
        .collect()
}

/// Whether `ranges` hold `slot`.
fn within(ranges: &[(u16, u16)], slot: u16) -> bool {
    ranges.iter().any(|(a, b)| (*a..=*b).contains(&slot))
}

/// A node on `cluster` as the monitor leaves it: repaired, and probed
/// again, so the script cache proves every primary.
async fn proved(cluster: &RedisCluster) -> RedisNode {
    let node = node(cluster.url()).await;
    Probed::probe(&node).await.unwrap();
    node
}

/// Locks on `names` asked all at once of `node` while `primary` is stopped
/// (`SIGSTOP`, 300 ms): the first request to it leaves, the others queue
/// behind it. Their values and answers.
async fn lock_while_stopped(
    node: &RedisNode,
    primary: &RedisProcess,
    names: &[String],
) -> Vec<(LockValue, Result<Option<u64>, NodeError>)> {
    primary.pause();
    let values: Vec<LockValue> = names.iter().map(|_| LockValue::random()).collect();
    let keys: Vec<String> = names.iter().map(|n| keys::of(n)).collect();
    let locks = (keys.iter().zip(&values)).map(|(key, value)| node.try_lock(key, value.expose(), TTL, ""));
    let resume = async {
        sleep(Duration::from_millis(300)).await;
        primary.resume();
    };
    let (answers, ()) = tokio::join!(futures::future::join_all(locks), resume);
    values.into_iter().zip(answers).collect()
}

/// Forty requests for forty slots of one primary, queued while a batch is
/// on its way to it, leave in one call: per slot they would be forty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_requests_of_every_slot_of_a_primary_share_one_call() {
    let cluster = RedisCluster::start(3, 0);
    let node = proved(&cluster).await;
    let ranges = cluster.ranges_of(0);
    let names = names_where(40, |slot| within(&ranges, slot));
    let warm = node
        .try_lock(&keys::of(&names[0]), LockValue::random().expose(), TTL, "")
        .await;
    assert!(warm.unwrap().is_some());
    let port = cluster.nodes[0].port();
    cli(port, &["config", "resetstat"]);

    let locked = lock_while_stopped(&node, &cluster.nodes[0], &names[1..]).await;
    for (name, (_, answer)) in names[1..].iter().zip(&locked) {
        assert!(matches!(answer, Ok(Some(_))), "{name}: {answer:?}");
    }
    // One `INCR` of a bucket's counter per lock.
    let (scripts, incrs) = (calls(port, "evalsha"), calls(port, "incr"));
    assert_eq!(incrs, 39, "the primary did not take the 39 locks");
    assert!(
        scripts <= 3,
        "{scripts} script calls for 39 requests of 39 slots on one primary (by slot: 39)"
    );
}

/// A slot moves to another primary behind the node's back (its slot map
/// still names the old one): in a batch to the old primary only that
/// slot's request goes again, by slot, and lands where the slot is now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_slot_moved_goes_again_alone_to_its_new_primary() {
    let cluster = RedisCluster::start(3, 0);
    let node = proved(&cluster).await;
    let before = cluster.ranges_of(0);
    tokio::task::block_in_place(|| cluster.reshard(0, 1, 1));
    let after = cluster.ranges_of(0);
    let moved = names_where(1, |slot| within(&before, slot) && !within(&after, slot));
    let stayed = names_where(20, |slot| within(&after, slot));
    assert_eq!(moved.len(), 1, "no slot moved");
    let (old, new) = (cluster.nodes[0].port(), cluster.nodes[1].port());
    for port in [old, new] {
        cli(port, &["config", "resetstat"]);
    }

    // The first request leaves alone; the moved one queues among the others.
    let names: Vec<String> = [&stayed[..1], &moved[..], &stayed[1..]].concat();
    let locked = lock_while_stopped(&node, &cluster.nodes[0], &names).await;
    for (name, (_, answer)) in names.iter().zip(&locked) {
        assert!(matches!(answer, Ok(Some(_))), "{name}: {answer:?}");
    }
    let exists = |port: u16, name: &str| cli(port, &["exists", &keys::of(name)]).trim() == "1";
    assert!(
        exists(new, &moved[0]) && !exists(old, &moved[0]),
        "the moved lock is not on its new primary"
    );
    assert!(stayed.iter().all(|name| exists(old, name)));
    assert_eq!(calls(old, "incr"), 20, "the old primary took other locks than its 20");
    // Once by slot; and once more when it led its batch, whose call Redis
    // then redirected there (`MOVED`), where it ran nothing: not that
    // primary's node ID.
    let scripts = calls(new, "evalsha");
    assert!(
        (1..=2).contains(&scripts),
        "the moved request went to its new primary {scripts} times"
    );
    assert_eq!(
        calls(new, "incr"),
        1,
        "the new primary took other locks than the moved one"
    );
    // Released where it is now.
    let (value, _) = &locked[1];
    let released = node.unlock(&keys::of(&moved[0]), value.expose(), Announce::No).await;
    assert!(released.unwrap(), "the moved lock was not released");
    assert!(!exists(new, &moved[0]));
}

/// The replies of `commands`, pipelined on one new connection to the node
/// at `port`, as the raw RESP text: `ASKING` and a script after it run as
/// fred would send them when it follows an `ASK`.
fn raw_replies(port: u16, commands: &[&[&str]], expected_len: usize) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = String::new();
    for command in commands {
        out += &format!("*{}\r\n", command.len());
        for arg in *command {
            out += &format!("${}\r\n{arg}\r\n", arg.len());
        }
    }
    stream.write_all(out.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    while got.len() < expected_len {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// A batch by primary whose routing key (its first request's bucket
/// marker) has migrated to the importing primary is redirected there by
/// `ASK`, where, run with `ASKING`, a key not moved yet reads as free: the
/// daemon grants nothing twice (fred 10.1 does not carry the call there),
/// and the script itself, run there with `ASKING`, takes nothing: it is
/// not the node ID the batch was for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_redirected_by_ask_takes_nothing_on_the_importing_side() {
    let cluster = RedisCluster::start(3, 0);
    let node = proved(&cluster).await;
    let ranges = cluster.ranges_of(0);
    let name = format!("lock:{}", names_where(1, |slot| within(&ranges, slot))[0]);
    let held = keys::in_bucket_of(&name, "lock:held");
    let first = node.try_lock(&held, LockValue::random().expose(), TTL, "").await;
    assert!(matches!(first, Ok(Some(_))), "{first:?}");

    // The bucket's slot starts to move to primary 1; its marker and counter
    // go first, the held lock's key stays behind.
    let (old, new) = (cluster.nodes[0].port(), cluster.nodes[1].port());
    let id = |port: u16| cli(port, &["cluster", "myid"]).trim().to_owned();
    let slot = buckets::slot(&held).to_string();
    assert_eq!(
        cli(new, &["cluster", "setslot", &slot, "importing", &id(old)]).trim(),
        "OK"
    );
    assert_eq!(
        cli(old, &["cluster", "setslot", &slot, "migrating", &id(new)]).trim(),
        "OK"
    );
    let (marker, fence) = (keys::marker(&name), keys::fence(&name));
    let port = new.to_string();
    let migrate = ["migrate", "127.0.0.1", &port, "", "0", "5000", "keys", &marker, &fence];
    assert_eq!(cli(old, &migrate).trim(), "OK");

    let value = LockValue::random();
    let again = tokio::time::timeout(Duration::from_secs(5), node.try_lock(&held, value.expose(), TTL, "")).await;
    assert!(
        !matches!(again, Ok(Ok(Some(_)))),
        "the held lock was granted again: {again:?}"
    );
    let exists = |port: u16, key: &str| cli(port, &["exists", key]).trim() == "1";
    assert!(!exists(new, &held), "the importing primary took the held lock's key");
    assert!(exists(old, &held), "the held lock is gone from its primary");

    // ROUND by primary (the variant a script cache proves, which reads no
    // marker) for the old primary, run on the importing one with `ASKING`.
    let script = redlockd::redis::scripts::cached_variant_by_primary("test").lua;
    let old_id = id(old);
    let round = [
        "eval",
        &script,
        "1",
        &marker,
        "tag",
        "spublish",
        "1000",
        "L",
        &old_id,
        &held,
        &fence,
        value.expose(),
        "10000",
        "holder",
    ];
    let replies = raw_replies(new, &[&["asking"], &round], 13);
    assert_eq!(
        replies, "+OK\r\n*1\r\n:-4\r\n",
        "ROUND by primary ran on the importing primary"
    );
    assert!(!exists(new, &held), "the importing primary took the held lock's key");
}

/// Slots migrate between primaries while clients lock many resources in
/// and beside them, their requests sharing per-primary batches: every
/// resource's history is safe, and the first resource is granted again
/// after the reshard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reshard_under_load_with_batches_by_primary_is_safe() {
    let (clusters, rig) = cluster_rig(0, 2, true).await;
    let cluster = &clusters[0];
    let from = 0;
    let moving = cluster.ranges_of(from)[0];
    let moving = (moving.0, moving.0 + 299);
    // Eight resources in the slots that move, four beside them on the
    // same primary, four on the others.
    let mut resources = names_where(8, |slot| within(&[moving], slot));
    let ranges = cluster.ranges_of(from);
    resources.extend(names_where(4, |slot| within(&ranges, slot) && !within(&[moving], slot)));
    resources.extend(names_where(4, |slot| !within(&ranges, slot)));
    let mut work = Vec::new();
    for (i, resource) in resources.iter().enumerate() {
        work.push(
            rig.workload(if i == 0 { 4 } else { 2 }, resource, Duration::from_millis(9000))
                .await,
        );
    }
    sleep(Duration::from_secs(1)).await;
    // Each batch by primary first asks the node's ID.
    let guards = || {
        cluster.nodes[..2]
            .iter()
            .map(|n| calls(n.port(), "cluster|myid"))
            .collect::<Vec<u64>>()
    };
    let before = guards();
    tokio::task::block_in_place(|| cluster.reshard(from, 1, 300));
    let after = cluster.ranges_of(1);
    assert!(
        within(&after, moving.0) && within(&after, moving.1),
        "the slots did not move"
    );
    let healed = Instant::now();
    for w in work {
        w.await.unwrap();
    }
    let after = guards();
    assert!(
        before.iter().zip(&after).all(|(b, a)| a > b),
        "the primaries of the reshard ran no batch by primary: CLUSTER MYID {before:?} then {after:?}"
    );
    let report = rig.check(&resources[0], Some(healed));
    report.assert_safe();
    assert!(
        report.stats.grants >= 40,
        "too few grants to mean anything: {}",
        report.stats
    );
}
