//! Several resources at once against a real daemon and five real masters
//! (docs/design.md#sets): all or nothing, one value and
//! a token per member, per-member and whole-set extend and release, no
//! deadlock between overlapping sets (and its control: member by member,
//! two callers deadlock, and the checker's liveness rule says so), bad
//! input.

use crate::support;

use std::time::Duration;

use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{
    AcquireManyRequest, ExtendManyRequest, ExtendRequest, Lease, ReleaseManyRequest, ReleaseRequest,
};
use support::history::{Grant, History, Kind, Options, Reply, ViolationKind, check};
use support::*;
use tonic::transport::Channel;

fn set(resources: &[&str], ttl: f64, wait: f64) -> AcquireManyRequest {
    AcquireManyRequest {
        resources: resources.iter().map(|r| (*r).to_owned()).collect(),
        ttl: secs(ttl),
        wait: if wait > 0.0 { secs(wait) } else { None },
        owner: "sets".into(),
    }
}

async fn take(c: &mut LockClient<Channel>, request: AcquireManyRequest) -> Option<Vec<Lease>> {
    let reply = c.acquire_many(request).await.unwrap().into_inner();
    reply.acquired.then_some(reply.leases)
}

#[tokio::test]
async fn a_set_is_taken_all_or_nothing_with_one_value_and_a_token_per_member() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let b = must_acquire(&mut c, "b", 10.0, 0.0).await;
    assert!(
        take(&mut c, set(&["c", "a", "b", "a"], 10.0, 0.0)).await.is_none(),
        "b is held"
    );
    // Nothing of the set was left held.
    for free in ["a", "c"] {
        let lease = must_acquire(&mut c, free, 10.0, 0.0).await;
        assert!(release(&mut c, &lease).await);
    }
    assert!(release(&mut c, &b).await);
    let leases = take(&mut c, set(&["c", "a", "b", "a"], 10.0, 0.0))
        .await
        .expect("all free");
    let names: Vec<&str> = leases.iter().map(|l| l.resource.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"], "sorted, without repeats");
    assert!(leases.iter().all(|l| l.value == leases[0].value), "one value");
    assert!(leases[1].fencing_token > b.fencing_token, "b's token went on rising");
    for member in ["a", "b", "c"] {
        assert!(
            !try_acquire(&mut c, member, 10.0, 0.0).await.acquired,
            "{member} is held"
        );
    }
    let view = c
        .inspect(redlockd_client::proto::InspectRequest { resource: "b".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(view.held && view.set_members == ["a", "b", "c"], "{view:?}");
    // One member extended and released alone; the rest together.
    let value = leases[0].value.clone();
    let one = ExtendRequest {
        resource: "b".into(),
        value: value.clone(),
        ttl: secs(10.0),
    };
    assert!(c.extend(one).await.unwrap().into_inner().extended);
    let released = c
        .release(ReleaseRequest {
            resource: "b".into(),
            value: value.clone(),
        })
        .await
        .unwrap();
    assert!(released.into_inner().released);
    must_acquire(&mut c, "b", 10.0, 0.0).await;
    let rest = vec!["a".to_owned(), "c".to_owned()];
    let extended = c
        .extend_many(ExtendManyRequest {
            resources: rest.clone(),
            value: value.clone(),
            ttl: secs(10.0),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(extended.extended && extended.members == [true, true] && extended.validity.is_some());
    let released = c
        .release_many(ReleaseManyRequest {
            resources: vec!["a".into(), "b".into(), "c".into()],
            value,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (released.released, released.members),
        (false, vec![true, false, true]),
        "b went before"
    );
    daemon.stop().await;
}

/// Clients `c0` and `c1` want {a, b} and {b, a} at the same moment, and hold what they get for 300 ms:
/// as a set (`many`), or member by member in their own order, each member waited for up to 2.5 s and
/// kept while waiting for the next (hold-and-wait, as a MultiLock of single locks does). Records every
/// member's grant and checks that, after the first grant, some acquisition of each member is granted
/// within 1.5 s: the other caller's turn.
async fn overlapping(daemon: &Daemon, many: bool) -> support::history::Report {
    let history = History::new();
    let clients = vec![daemon.client().await, daemon.client().await];
    let runs = clients.into_iter().enumerate().map(|(i, mut c)| {
        let history = history.clone();
        async move {
            let client = format!("c{i}");
            let order: Vec<&str> = if i == 0 { vec!["a", "b"] } else { vec!["b", "a"] };
            let mut held = Vec::new();
            if many {
                let ops: Vec<_> = order
                    .iter()
                    .map(|r| history.invoke(&client, r, Kind::Acquire))
                    .collect();
                let leases = take(&mut c, set(&order, 5.0, 3.0)).await.unwrap_or_default();
                for (op, member) in ops.into_iter().zip(&order) {
                    let lease = leases.iter().find(|l| l.resource == *member);
                    history.complete(op, lease.map_or(Reply::Fail, granted));
                }
                held = leases;
            } else {
                for member in order {
                    let op = history.invoke(&client, member, Kind::Acquire);
                    let reply = try_acquire(&mut c, member, 5.0, 2.5).await;
                    history.complete(
                        op,
                        reply
                            .lease
                            .as_ref()
                            .filter(|_| reply.acquired)
                            .map_or(Reply::Fail, granted),
                    );
                    match reply.lease.filter(|_| reply.acquired) {
                        Some(lease) => held.push(lease),
                        None => break,
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            for lease in held {
                let op = history.invoke(&client, &lease.resource, Kind::Release(lease.value.clone()));
                let ok = release(&mut c, &lease).await;
                history.complete(op, if ok { Reply::Released } else { Reply::Fail });
            }
        }
    });
    futures::future::join_all(runs).await;
    // From just after the first grant: the other caller's turn must come.
    let first = (history.ops().into_iter())
        .filter(|op| matches!(op.reply, Reply::Granted(_)))
        .filter_map(|op| op.complete)
        .min()
        .expect("someone was granted something");
    let (after, deadline) = (first + Duration::from_millis(1), Duration::from_millis(1500));
    let options = Options::default()
        .liveness("a", after, deadline)
        .liveness("b", after, deadline);
    let report = check(&history, &[], options);
    println!("{}: {report}", if many { "sets" } else { "member by member" });
    report
}

fn granted(lease: &Lease) -> Reply {
    Reply::Granted(Grant {
        token: lease.fencing_token,
        validity: Duration::try_from(lease.validity.unwrap()).unwrap(),
        value: lease.value.clone(),
        ..Grant::default()
    })
}

#[tokio::test]
async fn overlapping_sets_never_deadlock_and_member_by_member_they_do() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // The control: each holds its first member and waits for the other's.
    let control = overlapping(&daemon, false).await;
    assert!(
        control.has(ViolationKind::Liveness),
        "the checker missed the deadlock:\n{control}"
    );
    // Let the control's locks expire.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let sets = overlapping(&daemon, true).await;
    sets.assert_safe();
    assert_eq!(sets.stats.grants, 4, "both sets were granted: {sets}");
    daemon.stop().await;
}

#[tokio::test]
async fn sets_too_large_or_with_a_bad_member_are_refused_naming_resources() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut c = daemon.client().await;
    let seventeen: Vec<String> = (0..17).map(|i| format!("r{i}")).collect();
    let names: Vec<&str> = seventeen.iter().map(String::as_str).collect();
    for (request, says) in [
        (set(&names, 10.0, 0.0), "1 to 16"),
        (set(&[], 10.0, 0.0), "1 to 16"),
        (set(&["ok", "nul\0"], 10.0, 0.0), "[1]"),
    ] {
        let status = c.acquire_many(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains("resources") && status.message().contains(says),
            "{status:?}"
        );
    }
    // Through the Pipeline too.
    let pipeline = redlockd_client::Pipeline::open(daemon.client().await).await.unwrap();
    let reply = pipeline.acquire_many(set(&["x", "y"], 10.0, 0.0)).await.unwrap();
    assert!(reply.acquired && reply.leases.len() == 2, "{reply:?}");
    daemon.stop().await;
}
