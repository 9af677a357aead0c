//! A cluster position's lanes by primary (docs/design.md#cluster-positions):
//! a request goes straight into the lane of the primary serving its slot,
//! as a request to a standalone master goes into its one lane; a slot's
//! requests are on one lane at a time (`tickets`), so a release never
//! overtakes its lock wherever the slot moves.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::batch::{Batches, Route};
use super::conn::Conn;
use super::tickets::Tickets;
use fred::bytes_utils::Str;
use fred::prelude::{ClusterInterface, Value};
use fred::types::config::Server;

/// A range of slots (first, last), its primary's lane's index in
/// `Primaries::lanes`, and the lane.
type Range = (u16, u16, u16, Arc<Batches>);

/// The lanes of a cluster's primaries, one per primary (by address and node
/// ID: a node that came back empty at the same address is another node),
/// made when first used; and the slot map they are found by, this module's
/// copy of fred's, read again once a batch met a slot its primary did not
/// serve.
pub(super) struct Primaries {
    conn: Arc<Conn>,
    pub(super) lanes: Mutex<Vec<(Server, Str, Arc<Batches>)>>,
    map: RwLock<Vec<Range>>,
    /// Set by a lane that answered "not here": read the map again.
    stale: Arc<AtomicBool>,
    /// Which lane each slot's unanswered requests are on.
    pub(super) tickets: Arc<Tickets>,
}

impl Primaries {
    pub(super) fn new(conn: Arc<Conn>) -> Primaries {
        Primaries {
            conn,
            lanes: Mutex::default(),
            map: RwLock::default(),
            stale: Arc::new(AtomicBool::new(true)),
            tickets: Arc::new(Tickets::new()),
        }
    }

    /// The lane of the primary serving `slot`, and its index; none while
    /// fred has no slot map.
    pub(super) fn lane_of(&self, slot: u16) -> Option<(u16, Arc<Batches>)> {
        if self.stale.swap(false, Ordering::Relaxed) {
            self.read_map();
        }
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        // The last range starting at or before `slot` (ranges in order).
        let at = map.partition_point(|(start, _, _, _)| *start <= slot).checked_sub(1)?;
        let (_, end, index, lane) = &map[at];
        (slot <= *end).then(|| (*index, Arc::clone(lane)))
    }

    /// This module's map, from fred's: each range with its primary's lane.
    fn read_map(&self) {
        let Some(state) = self.conn.client.cached_cluster_state() else {
            self.stale.store(true, Ordering::Relaxed);
            return;
        };
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        let mut map = Vec::with_capacity(state.slots().len());
        for range in state.slots() {
            let found = (lanes.iter()).position(|(server, id, _)| *server == range.primary && *id == range.id);
            let index = found.unwrap_or_else(|| {
                let route = Route::Primary(Value::String(range.id.clone()), Arc::clone(&self.stale));
                let lane = Arc::new(Batches::routed(Arc::clone(&self.conn), route));
                lanes.push((range.primary.clone(), range.id.clone(), lane));
                lanes.len() - 1
            });
            // Fewer than 2^16 lanes: one per node that ever served a slot.
            let lane_index = u16::try_from(index).unwrap_or(u16::MAX - 1);
            map.push((range.start, range.end, lane_index, Arc::clone(&lanes[index].2)));
        }
        map.sort_unstable_by_key(|(start, _, _, _)| *start);
        *self.map.write().unwrap_or_else(PoisonError::into_inner) = map;
    }
}
