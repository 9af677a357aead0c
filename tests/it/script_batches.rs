//! Requests sent at once on one real `redis-server`: they share writes and
//! script calls and each still gets its own answer; a batch (one `ROUND`
//! call) does what its requests do one by one; a batch on an unverified
//! master grants nothing.

use crate::support;

use fred::prelude::{ClientLike, KeysInterface, LuaInterface};
use redlockd::redlock::{Announce, LockValue, Node, NodeError};
use support::Cluster;
use support::redis_node::{TTL, node};

/// How many `write`-family system calls this process has made.
fn writes_so_far() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .expect("/proc/self/io")
        .lines()
        .find_map(|l| l.strip_prefix("syscw:"))
        .expect("syscw in /proc/self/io")
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn concurrent_scripts_reach_the_master_in_shared_writes() {
    const N: u64 = 64;
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let values: Vec<LockValue> = (0..N).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..N).map(|i| support::keys::of(&format!("r{i}"))).collect();
    let before = writes_so_far();
    let granted = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    let writes = writes_so_far() - before;
    assert!(granted.iter().all(|g| matches!(g, Ok(Some(_)))), "{granted:?}");
    // A flush per script would be a write per script; scripts queued
    // together leave in a few writes.
    assert!(writes <= N / 4, "{N} scripts took {writes} writes");
}

/// How many `EVALSHA` calls the master has run.
async fn evalsha_calls(admin: &fred::prelude::Client) -> u64 {
    let stats: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test]
async fn lock_requests_sent_at_once_share_script_calls_and_each_gets_its_own_answer() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    // Sixty locks in the bucket of `r`, sharing its counter; every third
    // one is held by another owner already.
    let keys: Vec<String> = (0..60)
        .map(|i| support::keys::in_bucket_of("lock:r", &format!("lock:b{i}")))
        .collect();
    for i in (0..60).step_by(3) {
        let _: () = admin.set(&keys[i], "another owner", None, None, false).await.unwrap();
    }
    let values: Vec<LockValue> = (0..60).map(|_| LockValue::random()).collect();
    let before = evalsha_calls(&admin).await;
    let answers = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    let calls = evalsha_calls(&admin).await - before;
    assert!(calls < 20, "60 lock requests took {calls} script calls");
    let mut counters = Vec::new();
    for (i, answer) in answers.into_iter().enumerate() {
        match answer.unwrap() {
            Some(counter) => {
                assert_ne!(i % 3, 0, "b{i} was granted over another owner");
                let held: String = admin.get(&keys[i]).await.unwrap();
                assert_eq!(held.split('\n').next(), Some(values[i].expose()));
                assert_eq!(held.split('\n').nth(1), Some(counter.to_string().as_str()), "{held:?}");
                counters.push(counter);
            }
            None => assert_eq!(i % 3, 0, "b{i} was refused"),
        }
    }
    assert_eq!(counters.len(), 40);
    counters.sort_unstable();
    counters.dedup();
    assert_eq!(counters.len(), 40, "a counter value was handed out twice");
    // The counter stored is the last one handed out.
    assert_eq!(cluster.fence(0, "r").await, Some(counters[39].to_string()));
}

#[tokio::test]
async fn a_batch_on_an_unverified_master_grants_nothing_and_still_refuses_what_is_taken() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let _: () = admin
        .set(support::keys::of("held"), "another owner", None, None, false)
        .await
        .unwrap();
    let values: Vec<LockValue> = (0..10).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..10).map(|i| support::keys::of(&format!("u{i}"))).collect();
    // Every bucket of these locks names another process.
    for name in (0..10).map(|i| format!("lock:u{i}")).chain(["lock:held".to_owned()]) {
        let _: () = admin
            .set(support::keys::marker(&name), "0000:other process", None, None, false)
            .await
            .unwrap();
    }
    let answers = futures::future::join_all(
        keys.iter()
            .zip(&values)
            .map(|(key, value)| node.try_lock(key, value.expose(), TTL, "")),
    )
    .await;
    for answer in answers {
        let refused = answer.unwrap_err();
        assert!(refused == NodeError::Changed, "{refused}");
    }
    let other = LockValue::random();
    assert_eq!(
        node.try_lock(&support::keys::of("held"), other.expose(), TTL, "")
            .await
            .unwrap(),
        None
    );
    for i in 0..10 {
        assert_eq!(
            admin
                .get::<Option<String>, _>(support::keys::of(&format!("u{i}")))
                .await
                .unwrap(),
            None
        );
        let fence = cluster.fence(0, &format!("u{i}")).await;
        assert_eq!(fence, None, "an unverified batch moved the counter");
    }
}

#[tokio::test]
async fn releases_sent_at_once_share_script_calls_and_each_gets_its_own_answer() {
    let cluster = Cluster::start(1);
    let node = node(cluster.masters[0].url()).await;
    let admin = cluster.admin(0).await;
    let values: Vec<LockValue> = (0..60).map(|_| LockValue::random()).collect();
    let keys: Vec<String> = (0..60).map(|i| support::keys::of(&format!("u{i}"))).collect();
    for (key, value) in keys.iter().zip(&values) {
        assert!(node.try_lock(key, value.expose(), TTL, "").await.unwrap().is_some());
    }
    // Every third release names a value the lock does not hold.
    let stranger = LockValue::random();
    let before = evalsha_calls(&admin).await;
    let answers = futures::future::join_all(keys.iter().zip(&values).enumerate().map(|(i, (key, value))| {
        let value = if i % 3 == 0 { &stranger } else { value };
        node.unlock(key, value.expose(), Announce::IfWaited)
    }))
    .await;
    let calls = evalsha_calls(&admin).await - before;
    assert!(calls < 20, "60 releases took {calls} script calls");
    for (i, released) in answers.into_iter().enumerate() {
        let held: Option<String> = admin.get(&keys[i]).await.unwrap();
        if i % 3 == 0 {
            assert!(!released.unwrap(), "u{i} was released with a stranger's value");
            assert_eq!(
                held.as_deref().and_then(|h| h.split('\n').next()),
                Some(values[i].expose())
            );
        } else {
            assert!(released.unwrap(), "u{i} was not released");
            assert_eq!(held, None);
        }
    }
}

/// A small deterministic generator, so a failing case can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Every key of a case with its value and its TTL to the nearest 5 s
/// (refusal marks live the TTL asked plus 10 s; the case's TTLs are 10 s
/// apart), the counter, and how many announcements the master sent.
async fn state(admin: &fred::prelude::Client, keys: &[String]) -> Vec<(String, Option<String>, i64)> {
    let mut seen = Vec::new();
    for key in keys.iter().map(String::as_str) {
        let mut value: Option<String> = admin.get(key).await.unwrap();
        // A lock key's third line is the master's clock (when it was
        // granted), which two masters do not share: the rest must match.
        if key.contains(":lock:") {
            value = value.map(|v| {
                v.split('\n')
                    .enumerate()
                    .filter(|(i, _)| *i != 2)
                    .map(|(_, l)| l)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        let ttl: i64 = admin.pttl(key).await.unwrap();
        seen.push((key.to_owned(), value, if ttl > 0 { (ttl + 2_500) / 5_000 } else { ttl }));
    }
    let stats: String = admin.info(Some(fred::types::InfoKind::CommandStats)).await.unwrap();
    let published = stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_publish:calls="))
        .and_then(|rest| rest.split(',').next())
        .unwrap_or("0");
    seen.push(("announcements".into(), Some(published.to_owned()), 0));
    seen
}

/// A batch means what its requests mean one after the other (ROUND applies
/// them in the order they were asked for). Random batches of locks and
/// releases on three keys, with holders and refusal marks set beforehand,
/// run as one ROUND call on one master and as one call per request on
/// another; the replies, every key's value and TTL, the counter and the
/// number of announcements must agree, case after case.
#[tokio::test]
async fn a_batch_does_what_its_requests_do_one_by_one() {
    let cluster = Cluster::start(2);
    let batched = cluster.admin(0).await;
    let alone = cluster.admin(1).await;
    let mut run_ids = Vec::new();
    for admin in [&batched, &alone] {
        let info: String = admin.info(Some(fred::types::InfoKind::Server)).await.unwrap();
        run_ids.push(
            info.lines()
                .find_map(|l| l.strip_prefix("run_id:"))
                .unwrap()
                .trim()
                .to_owned(),
        );
    }
    let script = redlockd::redis::scripts::SCRIPTS.round.lua.as_str();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut grants = 0;
    for case in 0..300 {
        let locks: Vec<String> = (0..3).map(|j| support::keys::of(&format!("c{case}:{j}"))).collect();
        let marks: Vec<String> = (0..3)
            .map(|j| support::keys::beside(&format!("lock:c{case}:{j}"), "waiting:"))
            .collect();
        // Each lock's bucket: its counter (the same on both masters) and a
        // marker naming the running process.
        let fences: Vec<String> = (0..3)
            .map(|j| support::keys::fence(&format!("lock:c{case}:{j}")))
            .collect();
        let markers: Vec<String> = (0..3)
            .map(|j| support::keys::marker(&format!("lock:c{case}:{j}")))
            .collect();
        for (admin, run_id) in [&batched, &alone].into_iter().zip(&run_ids) {
            for j in 0..3 {
                let _: () = admin
                    .set(&markers[j], format!("{run_id}:replid"), None, None, false)
                    .await
                    .unwrap();
                let _: Option<String> = admin
                    .set(&fences[j], "1000", None, Some(fred::types::SetOptions::NX), false)
                    .await
                    .unwrap();
            }
        }
        for j in 0..3 {
            let holder = rng.pick(&["", "v0", "v1"]);
            let mark = rng.pick(&["", "t1", "t2", "*"]);
            for admin in [&batched, &alone] {
                for (key, value) in [(&locks[j], holder), (&marks[j], mark)] {
                    if !value.is_empty() {
                        let expire = Some(fred::types::Expiration::PX(60_000));
                        let _: () = admin.set(key, value, expire, None, false).await.unwrap();
                    }
                }
            }
        }
        let tag = rng.pick(&["t1", "t2"]);
        let requests: Vec<(usize, [&str; 4])> = (0..1 + rng.below(8))
            .map(|_| {
                let j = rng.below(3);
                let value = rng.pick(&["v0", "v1", "v2"]);
                let request = if rng.below(2) == 0 {
                    [
                        "L",
                        value,
                        rng.pick(&["20000", "30000"]),
                        rng.pick(&["d\nt\no1", "d\n\n"]),
                    ]
                } else {
                    // Announced never, when waited for, always.
                    [rng.pick(&["U", "W", "A"]), value, "", ""]
                };
                (j, request)
            })
            .collect();
        let call = |admin: &fred::prelude::Client, requests: &[(usize, [&str; 4])]| {
            // ROUND's declared layout (round_requests.lua): the kinds, then
            // a lock's key and fence counter with value, TTL and holder, a
            // release's key with its value.
            let kinds: String = requests.iter().map(|(_, request)| request[0]).collect();
            let mut keys = Vec::new();
            let mut args = vec![tag.to_owned(), "PUBLISH".to_owned(), "500".to_owned(), kinds];
            for (j, request) in requests {
                keys.push(locks[*j].clone());
                if request[0] == "L" {
                    keys.push(fences[*j].clone());
                    args.extend(request[1..].iter().map(|s| (*s).to_owned()));
                } else {
                    args.push(request[1].to_owned());
                }
            }
            let admin = admin.clone();
            async move { admin.eval::<Vec<i64>, _, _, _>(script, keys, args).await.unwrap() }
        };
        let together = call(&batched, &requests).await;
        let mut one_by_one = Vec::new();
        for request in &requests {
            one_by_one.extend(call(&alone, std::slice::from_ref(request)).await);
        }
        assert_eq!(together, one_by_one, "case {case}: replies to {requests:?} (tag {tag})");
        grants += together.iter().filter(|&&r| r > 0).count();
        let keys: Vec<String> = locks.iter().chain(&marks).chain(&fences).cloned().collect();
        assert_eq!(
            state(&batched, &keys).await,
            state(&alone, &keys).await,
            "case {case}: what {requests:?} (tag {tag}) left"
        );
    }
    // The cases covered the paths that matter, not only refusals.
    assert!(grants > 100, "only {grants} grants in 300 cases");
}
