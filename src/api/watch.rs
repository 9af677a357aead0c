//! `Lock/Watch` (docs/design.md#observe-and-watch): a watcher's changes as
//! a server stream, ended by a shutdown.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tonic::Status;

use crate::api::proto::{WatchEvent, WatchResponse};
use crate::api::wire::wire_holder;
use crate::locks::Locks;
use crate::locks::watcher::{Change, LockState};
use crate::redlock::Node;

/// What `Watch` streams.
pub(crate) type Watched = Pin<Box<dyn Stream<Item = Result<WatchResponse, Status>> + Send>>;

fn wire_change(change: Change) -> WatchEvent {
    match change {
        Change::Current => WatchEvent::Current,
        Change::Acquired => WatchEvent::Acquired,
        Change::Released => WatchEvent::Released,
        Change::Expired => WatchEvent::Expired,
        Change::ForceReleased => WatchEvent::ForceReleased,
        Change::Changed => WatchEvent::Changed,
    }
}

fn wire_state(change: Change, state: &LockState) -> WatchResponse {
    WatchResponse {
        event: wire_change(change).into(),
        held: state.held,
        holder: state.holder.as_ref().map(wire_holder),
        readers: state.readers,
        permits: state.permits,
        permits_out: state.permits_out,
    }
}

/// The changes of lock `name` until the client leaves or the daemon shuts
/// down (a graceful stop does not wait for watchers).
pub(crate) fn watch<N: Node>(locks: &Arc<Locks<N>>, name: &str) -> Watched {
    let watcher = locks.watch(name);
    let closing = Box::pin(locks.closing());
    Box::pin(futures::stream::unfold(
        (watcher, closing),
        |(mut watcher, mut closing)| async move {
            tokio::select! {
                () = &mut closing => None,
                (change, state) = watcher.next() => Some((Ok(wire_state(change, &state)), (watcher, closing))),
            }
        },
    ))
}
