//! Shared locks' reads through this daemon (docs/design.md#shared-locks).

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::*;

fn counting(reads: &Arc<AtomicU32>) -> impl FnOnce() -> BoxFuture<'static, u32> + use<> {
    let reads = reads.clone();
    move || {
        async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            reads.fetch_add(1, Ordering::SeqCst) + 1
        }
        .boxed()
    }
}

#[tokio::test(start_paused = true)]
async fn a_read_is_shared_by_those_it_serves_and_only_by_them() {
    let (shared, stamps) = (Arc::new(SharedReads::default()), Arc::new(Stamps::default()));
    let reads = Arc::new(AtomicU32::new(0));
    let heard = Since::Change(stamps.next());
    let many: Vec<_> = (0..50)
        .map(|_| {
            let (shared, stamps, reads) = (shared.clone(), stamps.clone(), reads.clone());
            tokio::spawn(async move { shared.read("e", heard, &stamps, counting(&reads)).await })
        })
        .collect();
    for one in many {
        assert_eq!(one.await.unwrap(), 1, "every one got the first read's answer");
    }
    assert_eq!(reads.load(Ordering::SeqCst), 1, "one read for fifty");
    // Done, and still good for a change heard of before it started.
    assert_eq!(shared.read("e", heard, &stamps, counting(&reads)).await, 1);
    // A change heard of after it started needs a read of its own.
    let later = Since::Change(stamps.next());
    assert_eq!(shared.read("e", later, &stamps, counting(&reads)).await, 2);
    // A tick: a read that started at it or after serves, an older one not.
    let tick = Since::Tick(Instant::now());
    assert_eq!(shared.read("e", tick, &stamps, counting(&reads)).await, 3);
    assert_eq!(shared.read("e", tick, &stamps, counting(&reads)).await, 3);
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(
        shared
            .read("e", Since::Tick(Instant::now()), &stamps, counting(&reads))
            .await,
        4
    );
    // Another name, another read; a forgotten name starts afresh.
    assert_eq!(shared.read("f", heard, &stamps, counting(&reads)).await, 5);
    shared.forget("f");
    assert_eq!(shared.read("f", heard, &stamps, counting(&reads)).await, 6);
}
