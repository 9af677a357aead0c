//! The size of an open Hold session's future, kept within jemalloc's
//! 1,024-byte class (docs/performance.md).

use std::future::Future;

use super::run;
use crate::redlock::fake::FakeNode;

/// The size of the future `f` returns, without calling it.
fn returned_size<A, B, C, D, E, F: Future>(_: impl FnOnce(A, B, C, D, E) -> F) -> usize {
    std::mem::size_of::<F>()
}

/// An open `Hold` session is one task, its future allocated for the
/// session's whole life, so workload (d) (docs/performance.md: 10,000
/// sessions, daemon RSS at most 50 MB) pays for every byte of it ten
/// thousand times. Tokio adds 104 bytes of header and trailer and
/// rounds the task to 128, and jemalloc serves a task of at most 1,024
/// bytes from its 1,024-byte class, the next class being 1,280: a future
/// of at most 920 bytes. A value kept twice (the stream, the plan, an
/// async fn's arguments) or a local kept across the hold loop's awaits
/// would cross that line without a word; this test says so instead.
/// Measured over the in-memory node: the node type sits behind an `Arc`
/// and its requests in boxed futures, so the size is the same as over
/// Redis masters (888 bytes either way), and `api/` names no `redis/`
/// type (docs/design.md#layers).
#[test]
fn an_open_hold_session_fits_in_a_1024_byte_task() {
    let size = returned_size(run::<FakeNode>);
    println!("the Hold session's future: {size} bytes");
    assert!(
        size <= 920,
        "the Hold session's future is {size} bytes; at most 920 keeps its task in jemalloc's 1,024-byte \
         class (docs/performance.md, workload (d)): box what the hold loop does not need"
    );
}
