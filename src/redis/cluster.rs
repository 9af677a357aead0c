//! A position served by a Redis Cluster (docs/design.md#cluster-positions):
//! its URL, the batches of lock requests per slot and per primary, and the
//! grouping of many-key calls by slot (the keys of one lock share its
//! bucket's hash tag, docs/design.md#keys).

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, PoisonError};

use fred::prelude::Value;

use super::batch::{Batches, Route, is_release};
use super::finish::Finish;
use super::keys::slot_groups;
use super::primaries::Primaries;
use super::tickets::SLOT_LANE;
use crate::redlock::buckets;
use crate::redlock::node::NodeError;

/// The schemes of a clustered position.
const SCHEMES: [&str; 2] = ["redis-cluster://", "rediss-cluster://"];

/// Whether `url` names a Redis Cluster position.
pub fn is_cluster_url(url: &str) -> bool {
    SCHEMES.iter().any(|s| url.starts_with(s))
}

/// A clustered URL with an empty host in its list of seeds
/// (`redis-cluster://a:1,,b:2`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: an empty host in the list of cluster seeds")]
pub struct EmptySeed {
    /// The URL as it was given, its password (if any) replaced by `***`:
    /// error messages reach logs.
    pub url: String,
}

/// `url` with the password of its user info `auth` (after the scheme, of
/// `scheme_len` bytes) replaced by `***`.
fn without_password(url: &str, scheme_len: usize, auth: &str) -> String {
    let Some((user, _)) = auth.split_once(':') else {
        return url.to_owned();
    };
    format!("{}{user}:***{}", &url[..scheme_len], &url[scheme_len + auth.len()..])
}

/// `redis-cluster://[user:password@]host:port[,host:port…][?…]` as fred
/// reads it (`…host:port?node=host:port&node=…`); any other URL as it is.
///
/// # Errors
/// A clustered URL with an empty seed in its list.
pub fn fred_url(url: &str) -> Result<String, EmptySeed> {
    let Some(scheme) = SCHEMES.iter().find(|s| url.starts_with(**s)) else {
        return Ok(url.to_owned());
    };
    let rest = &url[scheme.len()..];
    let (auth, rest) = rest.rsplit_once('@').map_or(("", rest), |(a, r)| (a, r));
    let (hosts, query) = rest.split_once('?').map_or((rest, ""), |(h, q)| (h, q));
    let seeds: Vec<&str> = hosts.split(',').collect();
    if seeds.iter().any(|s| s.trim().is_empty()) {
        return Err(EmptySeed {
            url: without_password(url, scheme.len(), auth),
        });
    }
    let mut fred = format!("{scheme}{auth}{}{}", if auth.is_empty() { "" } else { "@" }, seeds[0]);
    let mut params: Vec<String> = seeds[1..].iter().map(|s| format!("node={s}")).collect();
    params.extend(query.split('&').filter(|p| !p.is_empty()).map(str::to_owned));
    if !params.is_empty() {
        fred.push('?');
        fred.push_str(&params.join("&"));
    }
    Ok(fred)
}

/// The batches of a position: one for a standalone master; on a cluster
/// one per primary while batches go by primary (Redis 7 and later,
/// `Conn::by_primary`), else one per slot, made when first used. A slot's
/// requests are on one lane at a time (`tickets::Tickets`), which keeps a
/// lock and its release in order wherever the slot moves.
pub(super) struct Lanes {
    pub(super) first: Arc<Batches>,
    /// Indexed by slot: a lookup is a load.
    per_slot: Option<Box<[OnceLock<Arc<Batches>>]>>,
    primaries: Option<Arc<Primaries>>,
}

impl Lanes {
    pub(super) fn new(first: Arc<Batches>, clustered: bool) -> Lanes {
        Lanes {
            per_slot: clustered.then(|| (0..buckets::BUCKETS).map(|_| OnceLock::new()).collect()),
            primaries: clustered.then(|| Arc::new(Primaries::new(Arc::clone(&first.conn)))),
            first,
        }
    }

    /// One request on lock `key` (`Batches::request`), in the lane of its
    /// position, primary or slot.
    pub(super) async fn request(&self, key: &str, args: [Value; 4]) -> Result<i64, NodeError> {
        let (Some(per_slot), Some(primaries)) = (&self.per_slot, &self.primaries) else {
            return self.first.request(key, args, None).await;
        };
        let slot = buckets::slot(key);
        let by_primary = self.first.conn.by_primary.load(Ordering::Relaxed);
        let (index, lane) = match by_primary.then(|| primaries.lane_of(slot)).flatten() {
            Some(found) => found,
            None => {
                let lane = per_slot[usize::from(slot)]
                    .get_or_init(|| Arc::new(Batches::routed(Arc::clone(&self.first.conn), Route::Direct)));
                (SLOT_LANE, Arc::clone(lane))
            }
        };
        if let Some(ticket) = primaries.tickets.ticket_now(slot, index) {
            return lane.request(key, args, Some(ticket)).await;
        }
        // The slot's requests are on another lane: wait for them. A
        // release waits to its end even if its caller stops waiting (the
        // engine answers releases at quorum), as a queued one would.
        let (tickets, key) = (Arc::clone(&primaries.tickets), key.to_owned());
        let release = is_release(&args);
        let waited = async move {
            let ticket = tickets.ticket(slot, index).await;
            lane.request(&key, args, Some(ticket)).await
        };
        if release {
            Finish::new(waited).await
        } else {
            waited.await
        }
    }

    /// Every batches made so far.
    pub(super) fn all(&self) -> Vec<Arc<Batches>> {
        let mut all = vec![Arc::clone(&self.first)];
        if let Some(per_slot) = &self.per_slot {
            all.extend(per_slot.iter().filter_map(OnceLock::get).cloned());
        }
        if let Some(primaries) = &self.primaries {
            let lanes = primaries.lanes.lock().unwrap_or_else(PoisonError::into_inner);
            all.extend(lanes.iter().map(|(_, _, lane)| Arc::clone(lane)));
        }
        all
    }
}

/// Runs `call` on the items of `items` grouped by the slot of `key_of`
/// each, every slot's call at once (a round waits for one master at most
/// `node_timeout`, and a call per slot in turn would take a round trip
/// each), and puts the answers back in the items' order. On a standalone
/// master (`clustered` false) one call takes them all.
pub(super) async fn by_slot<T: Copy, A, F, Fut>(
    items: &[T],
    clustered: bool,
    key_of: impl Fn(&T) -> &str,
    call: F,
) -> Result<Vec<A>, NodeError>
where
    F: Fn(Vec<T>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<A>, NodeError>>,
{
    if !clustered {
        return call(items.to_vec()).await;
    }
    let groups = slot_groups(items, key_of);
    let group_of = |at: &[usize]| at.iter().map(|i| items[*i]).collect::<Vec<T>>();
    let got = futures::future::join_all(groups.iter().map(|(_, at)| call(group_of(at)))).await;
    let mut answers: Vec<Option<A>> = (0..items.len()).map(|_| None).collect();
    for ((_, at), got) in groups.into_iter().zip(got) {
        let got = got?;
        if got.len() != at.len() {
            return Err(NodeError::Reply(format!(
                "{} answers for {} keys of one slot",
                got.len(),
                at.len()
            )));
        }
        for (i, answer) in at.into_iter().zip(got) {
            answers[i] = Some(answer);
        }
    }
    Ok(answers
        .into_iter()
        .map(|a| a.expect("every item is in one group"))
        .collect())
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
