//! What the status page's JSON says (docs/operations.md#status-page): the
//! masters and their standing (docs/design.md#quarantine) with each
//! cluster position's primaries (docs/design.md#cluster-positions), a page
//! of the locks under a prefix with this daemon's waiters, and the
//! elections with their leaders (docs/design.md#listing-and-force-release:
//! the same listing as `Admin/ListLocks`, in the caller's namespace).

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::api::auth::{Caller, scoped, scoped_election};
use crate::api::error::Error;
use crate::api::page_token::PageTokens;
use crate::api::wire::wire_holder;
use crate::locks::Locks;
use crate::locks::who::resource_of;
use crate::redlock::node::Probed;
use crate::redlock::standing::Standing;
use crate::redlock::{Engine, Listed, Page, PageEnd};

/// The most locks or elections on one page.
pub(crate) const PAGE_SIZE: usize = 50;
/// The most pages of the listing read for one page of the status page.
const LISTING_PAGES: usize = 16;

/// Every master: its standing as a person reads it (usable, quarantined,
/// repairing, unusable), why, and a cluster position's primaries.
pub(crate) fn masters<N: Probed>(engine: &Engine<N>) -> Value {
    let now = Instant::now();
    let masters: Vec<Value> = (engine.nodes().iter().enumerate())
        .map(|(index, node)| {
            let health = node.health();
            let (standing, why, rejoin) = match node.standing() {
                Standing::Usable => ("usable", String::new(), None),
                Standing::Quarantined { until, reason } if until > now => {
                    ("quarantined", reason, Some(until.duration_since(now).as_secs_f64()))
                }
                Standing::Quarantined { reason, .. } => (
                    "repairing",
                    format!(
                        "its fence counters are being raised from a quorum of the others before it rejoins ({reason})"
                    ),
                    None,
                ),
                Standing::Failed { check, reason } => {
                    ("unusable", format!("preflight {}: {reason}", check.as_str()), None)
                }
                Standing::Unverified => (
                    "unusable",
                    health.unreachable().map_or_else(
                        || "not verified yet: no probe has judged it since start or since it reconnected".to_owned(),
                        |reason| format!("unreachable: {reason}"),
                    ),
                    None,
                ),
            };
            let primaries: Vec<Value> = (health.primaries().into_iter())
                .map(|p| json!({"address": p.address, "buckets": p.buckets, "bucketsOut": p.buckets_out}))
                .collect();
            json!({
                "index": index,
                "address": node.name(),
                "standing": standing,
                "why": why,
                "rejoinInSeconds": rejoin,
                "bucketsOut": health.buckets_out().0,
                "primaries": primaries,
            })
        })
        .collect();
    let usable = masters.iter().filter(|m| m["standing"] == "usable").count();
    json!({"quorum": engine.quorum(), "usable": usable, "masters": masters})
}

/// Where a listing of `kind` ("locks" or "elections") starts for `caller`.
fn start(caller: &Caller, kind: &str, prefix: &str) -> String {
    match kind {
        "elections" => scoped_election(caller.tenant(), prefix),
        _ => scoped(caller.tenant(), prefix),
    }
}

/// One page of the locks (or elections) under `prefix`, and the token of
/// the next.
async fn listed<N: Probed>(
    locks: &Locks<N>,
    tokens: &PageTokens,
    caller: &Caller,
    (kind, prefix, token): (&str, &str, &str),
) -> Result<(Vec<Listed>, String), Error> {
    if !prefix.is_empty() {
        crate::api::request::prefix(prefix)?;
    }
    let tenant = caller.tenant().unwrap_or_default();
    // The kind is signed with the prefix: a token of one listing is no
    // token of the other.
    let signed = format!("{kind}\u{0}{prefix}");
    let page = if token.is_empty() {
        Page::first()
    } else {
        tokens.decode(token, tenant, &signed)?
    };
    let start = start(caller, kind, prefix);
    if page.node >= locks.masters() || page.pending.iter().any(|name| !name.starts_with(&start)) {
        return Err(Error::invalid("page_token", "does not belong to this listing"));
    }
    // A listing's page may come back short while the scan goes on (each
    // master also holds its buckets' keys): the page reads on, a few of
    // them, so that a person sees the locks rather than an empty page.
    let mut listed: Vec<Listed> = Vec::new();
    let mut end = PageEnd::More(page);
    for _ in 0..LISTING_PAGES {
        let PageEnd::More(page) = end else { break };
        if listed.len() >= PAGE_SIZE {
            end = PageEnd::More(page);
            break;
        }
        let (more, after) = locks.list(&start, page, PAGE_SIZE - listed.len()).await?;
        // SCAN may return a key twice: a page lists it once.
        for lock in more {
            if !listed.iter().any(|l| l.name == lock.name) {
                listed.push(lock);
            }
        }
        end = after;
    }
    let next = match end {
        PageEnd::More(page) => tokens.encode(&page, tenant, &signed),
        PageEnd::Done => String::new(),
    };
    Ok((listed, next))
}

/// A page of locks: each with its holder (owner, tenant, daemon, since,
/// fencing token, TTL, as Inspect writes them) and this daemon's waiters.
pub(crate) async fn locks<N: Probed>(
    locks: &Locks<N>,
    tokens: &PageTokens,
    caller: &Caller,
    prefix: &str,
    token: &str,
) -> Result<Value, Error> {
    let (listed, next) = listed(locks, tokens, caller, ("locks", prefix, token)).await?;
    let rows: Vec<Value> = (listed.iter())
        .map(|lock| {
            json!({
                "resource": resource_of(&lock.name),
                "holder": serde_json::to_value(wire_holder(&lock.holder)).unwrap_or_default(),
                // The queue of this daemon keyed by lock name, as Inspect reads it.
                "waiters": locks.participants(&lock.name),
            })
        })
        .collect();
    Ok(json!({"locks": rows, "nextPageToken": next}))
}

/// A page of elections: each with its leader (candidate, term, since) and
/// this daemon's candidates in line.
pub(crate) async fn elections<N: Probed>(
    locks: &Locks<N>,
    tokens: &PageTokens,
    caller: &Caller,
    prefix: &str,
    token: &str,
) -> Result<Value, Error> {
    let (listed, next) = listed(locks, tokens, caller, ("elections", prefix, token)).await?;
    let mut rows = Vec::with_capacity(listed.len());
    for election in &listed {
        // A read of the masters per election: a page holds at most PAGE_SIZE.
        let leader = match locks.leader(&election.name).await? {
            Some(leader) => json!({
                "candidate": leader.candidate,
                "term": leader.term.to_string(),
                "sinceMs": leader.since_ms,
            }),
            None => Value::Null,
        };
        rows.push(json!({
            "election": resource_of(&election.name),
            "leader": leader,
            "candidates": locks.participants(&election.name),
        }));
    }
    Ok(json!({"elections": rows, "nextPageToken": next}))
}
