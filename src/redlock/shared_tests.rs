//! Shared locks in the engine, on in-memory nodes with Tokio's clock
//! paused (docs/design.md#shared-locks): readers together and excluded by
//! writers, a reader's token never advancing a counter yet published to a
//! majority, so a later writer outranks it.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::redlock::fake::{FakeNode, Fault};
use crate::redlock::*;

const TTL: Duration = Duration::from_secs(10);

fn cluster(counters: &[u64], publish_round: bool) -> (Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = (counters.iter().enumerate())
        .map(|(i, c)| FakeNode::new(&format!("n{i}"), *c))
        .collect();
    let config = EngineConfig {
        publish_round,
        ..crate::redlock::engine::tests::config()
    };
    (Arc::new(Engine::new(nodes.clone(), config)), nodes)
}

async fn take(engine: &Engine<FakeNode>, kind: Kind) -> Option<Lease> {
    match engine
        .acquire("r", (kind, TTL), Duration::ZERO, pending(), ALONE, "")
        .await
    {
        Ok(Acquired::Granted(lease)) => Some(lease),
        Ok(Acquired::NotGranted { .. }) => None,
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test(start_paused = true)]
async fn readers_share_writers_exclude_and_readers_never_advance_a_counter() {
    let (engine, nodes) = cluster(&[7; 5], true);
    let a = take(&engine, Kind::Shared).await.expect("a free lock");
    let b = take(&engine, Kind::Shared).await.expect("readers share");
    // A reader's token: the counter, with the highest index (`read_token`).
    let read = 7 * 16 + 15;
    assert_eq!(
        (a.value.mode(), a.fencing_token, b.fencing_token),
        (Mode::Shared, read, read)
    );
    assert!(
        nodes.iter().all(|n| n.counter() == Some(7)),
        "a reader advanced a counter"
    );
    assert!(
        take(&engine, Kind::Exclusive).await.is_none(),
        "a writer beside readers"
    );
    assert!(engine.release(&a.resource, &a.value).await.unwrap());
    assert!(
        take(&engine, Kind::Exclusive).await.is_none(),
        "a writer beside a reader"
    );
    assert!(engine.release(&b.resource, &b.value).await.unwrap());
    let writer = take(&engine, Kind::Exclusive).await.expect("the readers left");
    assert_eq!(writer.fencing_token, 8 * 16);
    assert!(take(&engine, Kind::Shared).await.is_none(), "a reader beside a writer");
    let view = engine.inspect("r").await;
    assert!(view.held && view.readers == 0 && view.holder.is_some(), "{view:?}");
}

#[tokio::test(start_paused = true)]
async fn a_reader_publishes_its_token_so_that_a_later_writer_outranks_it() {
    for publish_round in [true, false] {
        // Two masters are ahead (failed attempts moved them): the reader
        // answers with the highest counter it saw, 9.
        let (engine, nodes) = cluster(&[5, 5, 5, 9, 9], publish_round);
        let reader = take(&engine, Kind::Shared).await.expect("a free lock");
        assert_eq!(reader.fencing_token, 9 * 16 + 15);
        assert!(engine.release(&reader.resource, &reader.value).await.unwrap());
        // The two that are ahead go away; the writer reaches the others.
        nodes[3].set_fault(Fault::Down);
        nodes[4].set_fault(Fault::Down);
        let writer = take(&engine, Kind::Exclusive).await.expect("three masters grant");
        if publish_round {
            assert_eq!(writer.fencing_token, 10 * 16, "the writer did not outrank the reader");
        } else {
            // The control: without round 2 the write is fenced below a
            // read granted before it.
            assert!(writer.fencing_token < reader.fencing_token, "{writer:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_writer_refused_by_readers_keeps_new_readers_out_for_a_while() {
    let (engine, _) = cluster(&[1; 5], true);
    let reader = take(&engine, Kind::Shared).await.unwrap();
    assert!(take(&engine, Kind::Exclusive).await.is_none());
    assert!(
        take(&engine, Kind::Shared).await.is_none(),
        "a reader overtook a waiting writer"
    );
    assert!(engine.release(&reader.resource, &reader.value).await.unwrap());
    assert!(take(&engine, Kind::Exclusive).await.is_some());
}

#[tokio::test(start_paused = true)]
async fn readers_extend_and_expire_one_by_one() {
    let (engine, _) = cluster(&[1; 5], true);
    let short = take(&engine, Kind::Shared).await.unwrap();
    let long = take(&engine, Kind::Shared).await.unwrap();
    tokio::time::sleep(TTL / 2).await;
    let extended = engine.extend("r", &long.value, TTL).await.unwrap();
    assert!(extended.is_some());
    tokio::time::sleep(TTL / 2 + Duration::from_millis(1)).await;
    assert_eq!(engine.inspect("r").await.readers, 1, "the short reader expired alone");
    assert_eq!(engine.extend("r", &short.value, TTL).await.unwrap(), None);
    assert!(!engine.release("r", &short.value).await.unwrap());
    assert!(engine.release("r", &long.value).await.unwrap());
    assert!(!engine.inspect("r").await.held);
}
