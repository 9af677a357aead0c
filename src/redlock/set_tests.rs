//! Sets in the engine, on in-memory nodes
//! (docs/design.md#sets): all or none on each node, a
//! quorum for the whole set, nothing left behind by a refused attempt.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::redlock::fake::FakeNode;

const TTL: Duration = Duration::from_secs(10);

fn cluster() -> (Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = (0..5).map(|i| FakeNode::new(&format!("n{i}"), 1)).collect();
    let config = crate::redlock::engine::tests::config();
    (Arc::new(Engine::new(nodes.clone(), config)), nodes)
}

fn names() -> Vec<String> {
    ["a", "b", "c"].map(String::from).to_vec()
}

#[tokio::test(start_paused = true)]
async fn each_node_takes_the_whole_set_or_none_and_a_quorum_takes_it() {
    let (engine, nodes) = cluster();
    let b = engine.lock_key("b");
    let stranger = LockValue::random();
    for node in &nodes {
        node.try_lock(&b, stranger.expose(), TTL, "").await.unwrap();
    }
    let outcome = engine
        .acquire_set(&names(), TTL, Duration::ZERO, pending(), "")
        .await
        .unwrap();
    assert!(matches!(outcome, AcquiredSet::NotGranted { .. }), "{outcome:?}");
    for node in &nodes {
        assert_eq!(node.holder(&engine.lock_key("a")), None, "a member left held");
        assert_eq!(node.holder(&engine.lock_key("c")), None, "a member left held");
    }
    // Held on two nodes only: those two take nothing, the other three all.
    for node in &nodes[2..] {
        node.unlock(&b, stranger.expose(), Announce::No).await.unwrap();
    }
    let AcquiredSet::Granted(leases) = engine
        .acquire_set(&names(), TTL, Duration::ZERO, pending(), "")
        .await
        .unwrap()
    else {
        panic!("three nodes took the whole set");
    };
    let resources: Vec<&str> = leases.iter().map(|l| l.resource.as_str()).collect();
    assert_eq!(resources, ["a", "b", "c"]);
    assert!(leases.iter().all(|l| l.value == leases[0].value));
    assert!(
        leases.windows(2).all(|w| w[0].fencing_token != w[1].fencing_token),
        "a token per member"
    );
    for node in &nodes[..2] {
        assert_eq!(
            node.holder(&engine.lock_key("a")),
            None,
            "a refusing node took part of the set"
        );
    }
    for node in &nodes[2..] {
        assert_eq!(
            node.holder(&engine.lock_key("c")).as_deref(),
            Some(leases[0].value.expose())
        );
    }
}
