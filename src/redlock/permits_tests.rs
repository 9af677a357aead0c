//! Semaphores in the engine, on in-memory nodes (docs/design.md#semaphores):
//! N permits on N slots, the next refused, agreement on N, and a slot
//! taken where a majority leaves it free even when some masters hold it.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::redlock::fake::FakeNode;
use crate::redlock::*;

const TTL: Duration = Duration::from_secs(10);

fn cluster() -> (Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = (0..5).map(|i| FakeNode::new(&format!("n{i}"), 1)).collect();
    let config = crate::redlock::engine::tests::config();
    (Arc::new(Engine::new(nodes.clone(), config)), nodes)
}

async fn take(engine: &Engine<FakeNode>, n: u32) -> Result<Option<Lease>, Error> {
    let outcome = engine
        .acquire("s", (Kind::Permits(n), TTL), Duration::ZERO, pending(), ALONE, "")
        .await?;
    Ok(match outcome {
        Acquired::Granted(lease) => Some(lease),
        Acquired::NotGranted { .. } => None,
    })
}

#[tokio::test(start_paused = true)]
async fn n_permits_take_n_slots_and_another_n_is_refused() {
    let (engine, _) = cluster();
    let mut slots = Vec::new();
    for _ in 0..3 {
        let lease = take(&engine, 3).await.unwrap().expect("a free permit");
        assert_eq!(lease.resource, "s");
        slots.push(lease.value.permit().expect("a permit's value").slot);
    }
    slots.sort_unstable();
    assert_eq!(slots, [0, 1, 2]);
    assert!(take(&engine, 3).await.unwrap().is_none(), "a fourth permit of three");
    assert_eq!(
        take(&engine, 4).await.unwrap_err(),
        Error::PermitsDiffer { asked: 4, held: 3 }
    );
}

#[tokio::test(start_paused = true)]
async fn a_slot_held_on_a_minority_of_masters_is_still_taken() {
    let (engine, nodes) = cluster();
    // Slot 0 is held on two masters by a stranger (a failed attempt's
    // leftovers); a majority leaves it free.
    let key = engine.lock_key(&slot_name("s", 0));
    for node in &nodes[..2] {
        node.try_lock(&key, LockValue::random().expose(), TTL, "")
            .await
            .unwrap();
    }
    let first = take(&engine, 2).await.unwrap().expect("slot 1 is free everywhere");
    assert_eq!(first.value.permit().unwrap().slot, 1, "the freest slot first");
    let second = take(&engine, 2).await.unwrap().expect("slot 0 is free on a majority");
    assert_eq!(second.value.permit().unwrap().slot, 0);
    assert!(take(&engine, 2).await.unwrap().is_none());
    // Each slot is an ordinary lock: released by its value, then taken again
    // with a larger token.
    assert!(engine.release(&slot_name("s", 1), &first.value).await.unwrap());
    let again = take(&engine, 2).await.unwrap().expect("slot 1 given back");
    assert_eq!(again.value.permit().unwrap().slot, 1);
    assert!(again.fencing_token > first.fencing_token);
}
