//! What each master holds and said, against five real masters: `Inspect`
//! agrees with them, also after one is killed, and a failed acquisition or
//! `UNAVAILABLE` carries each master's answer.

use crate::support;

use std::collections::HashMap;

use redlockd_client::proto::NodeOutcome;
use support::hold::inspect;
use support::*;
use tonic::Code;
use tonic_types::StatusExt;

#[tokio::test]
async fn inspect_agrees_with_the_masters_also_after_one_is_killed() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let free = inspect(&mut client, "i").await;
    assert!(!free.held && free.agreeing == 0 && free.quorum == 3, "{free:?}");
    let lease = must_acquire(&mut client, "i", 30.0, 0.0).await;
    let view = inspect(&mut client, "i").await;
    assert!(view.held && view.agreeing == 5, "{view:?}");
    for (i, node) in view.nodes.iter().enumerate() {
        assert!(node.reachable && node.held && node.with_majority, "{node:?}");
        assert!(node.ttl.is_some_and(|t| t.seconds <= 30), "{node:?}");
        assert_eq!(node.state, "usable");
        let fence: u64 = cluster.fence(i, "i").await.unwrap().parse().unwrap();
        assert_eq!(node.fence_counter, fence, "node {i}");
    }
    let text = format!("{view:?}");
    assert!(!text.contains(&lease.value), "Inspect leaked the lock value");

    cluster.kill(2);
    let view = inspect(&mut client, "i").await;
    assert!(view.held && view.agreeing == 4, "{view:?}");
    assert!(!view.nodes[2].reachable && !view.nodes[2].held);
    assert!(release(&mut client, &lease).await);
    let view = inspect(&mut client, "i").await;
    assert!(!view.held && view.agreeing == 0, "{view:?}");
    daemon.stop().await;
}

#[tokio::test]
async fn failed_acquisitions_and_unavailable_carry_what_each_master_said() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    let _lease = must_acquire(&mut client, "d", 30.0, 0.0).await;
    let refused = try_acquire(&mut client, "d", 5.0, 0.0).await;
    assert_eq!(refused.nodes().collect::<Vec<_>>(), vec![NodeOutcome::Taken; 5]);

    for i in [0, 1, 4] {
        cluster.kill(i);
    }
    let status = client.acquire(acquire_req("e", 5.0, 0.0)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    let info = status.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(info.reason, "NO_QUORUM");
    let metadata: HashMap<String, String> = info.metadata.into_iter().collect();
    assert!(
        ["errored", "timed out"].contains(&metadata["node.0"].as_str()),
        "{metadata:?}"
    );
    assert_eq!(metadata["node.2"], "granted");
    assert_eq!(metadata["needed"], "3");
    daemon.stop().await;
}
