//! Listing the locks a majority holds, page by page, and taking a lock away
//! whatever its value (docs/design.md#listing-and-force-release).
//!
//! A listing scans the masters one after another. A key found on master
//! `i` is listed there when a majority holds one value for it and no
//! master before `i` (that the listing could scan) holds that value: a lock
//! held for the whole listing is found on every master holding it, so it is
//! listed on the first of them, once per page; SCAN may return a key twice
//! while a master's table is resized, so it may appear again on a later page
//! (docs/design.md#listing-and-force-release).

use super::limit::within;
use futures::future::join_all;

use super::fanout::gather;
use super::holder::{self, Holder};
use super::node::{KeyView, Node};
use super::{Engine, Error, quorum};

/// At most this many scan steps per page: a page over a sparse keyspace may
/// come back short (even empty) with a next page to ask for.
const SCANS_PER_PAGE: usize = 32;
/// Keys a scan step looks at, at least.
const MIN_SCAN_COUNT: u32 = 10;
/// Keys a scan step looks at, at most. A step that found nothing doubles
/// the next one's count (up to this): a master holds 32,768 keys of buckets
/// besides its locks (docs/design.md#keys), and a page's steps must get
/// past them, while a step in a dense run of locks stays about the size of
/// the page (the names it finds beyond the page travel in the token).
const MAX_SCAN_COUNT: u32 = 4096;

/// Where a listing stands. Opaque to callers: the API signs it into a page
/// token and checks the signature when it comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The master being scanned.
    pub node: usize,
    /// Its scan cursor; `None` when its scan is done.
    pub cursor: Option<u64>,
    /// Masters that could not be scanned (bit `i`): they do not hide a lock
    /// from the masters after them.
    pub skipped: u32,
    /// Lock names the scan found that are not looked at yet.
    pub pending: Vec<String>,
}

impl Page {
    /// A listing's first page.
    pub fn first() -> Page {
        Page {
            node: 0,
            cursor: Some(0),
            skipped: 0,
            pending: Vec::new(),
        }
    }
}

/// One listed lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The lock name (the key after `<key_prefix>:`).
    pub name: String,
    /// Who holds it.
    pub holder: Holder,
}

/// What follows a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageEnd {
    /// Ask again from here.
    More(Page),
    /// The listing is complete.
    Done,
}

impl<N: Node> Engine<N> {
    /// Up to `limit` locks whose name starts with `start`, from `page` on.
    ///
    /// # Errors
    /// `Unavailable` when so many masters could not be scanned that a lock
    /// held by a majority could hide on the rest.
    pub async fn list(&self, start: &str, mut page: Page, limit: usize) -> Result<(Vec<Listed>, PageEnd), Error> {
        let n = self.nodes.len();
        let mut listed = Vec::new();
        let mut scans = 0;
        let mut empty_steps = 0;
        loop {
            let skipped = page.skipped.count_ones() as usize;
            if n - skipped < quorum::quorum(n) {
                return Err(self.unavailable(n - skipped, format!("{skipped} could not be scanned")));
            }
            if listed.len() >= limit {
                return Ok((listed, PageEnd::More(page)));
            }
            if page.pending.is_empty() {
                let Some(cursor) = page.cursor else {
                    page.node += 1;
                    if page.node >= n {
                        return Ok((listed, PageEnd::Done));
                    }
                    page.cursor = Some(0);
                    continue;
                };
                if scans == SCANS_PER_PAGE {
                    return Ok((listed, PageEnd::More(page)));
                }
                scans += 1;
                let count = (u32::try_from(limit - listed.len()).unwrap_or(u32::MAX))
                    .max(MIN_SCAN_COUNT)
                    .saturating_mul(1 << empty_steps.min(16))
                    .min(MAX_SCAN_COUNT.max(MIN_SCAN_COUNT));
                let node = &self.nodes[page.node];
                match within(self.config.node_timeout, node.scan(start, cursor, count)).await {
                    Ok(Ok((next, keys))) => {
                        page.cursor = (next != 0).then_some(next);
                        empty_steps = if keys.is_empty() { empty_steps + 1 } else { 0 };
                        page.pending = keys;
                    }
                    _ => {
                        tracing::warn!(node = node.name(), "a master could not be scanned; listing the rest");
                        page.skipped |= 1 << page.node;
                        page.cursor = None;
                    }
                }
                continue;
            }
            let take = page.pending.len().min(limit - listed.len());
            let names: Vec<String> = page.pending.drain(..take).collect();
            for lock in self.held_first_here(&names, &page).await {
                // SCAN may return a key twice; a page lists it once.
                if !listed.iter().any(|l: &Listed| l.name == lock.name) {
                    listed.push(lock);
                }
            }
        }
    }

    /// Of `names` found on master `page.node`, those a majority holds and
    /// no earlier scanned master holds, with their holders.
    async fn held_first_here(&self, names: &[String], page: &Page) -> Vec<Listed> {
        let keys: Vec<String> = names.iter().map(|name| self.lock_key(name)).collect();
        let calls = self
            .nodes
            .iter()
            .map(|node| within(self.config.node_timeout, node.views(&keys)));
        let per_node: Vec<Option<Vec<KeyView>>> = join_all(calls)
            .await
            .into_iter()
            .map(|r| r.ok().and_then(Result::ok).filter(|views| views.len() == keys.len()))
            .collect();
        let mut listed = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let views: Vec<Option<KeyView>> = per_node.iter().map(|v| v.as_ref().map(|v| v[k].clone())).collect();
            let Some(holder) = holder::agreed(&views) else {
                continue;
            };
            let (value, _) = holder::majority_value(&views);
            let earlier = (0..page.node).any(|i| {
                page.skipped & (1 << i) == 0 && views[i].as_ref().is_some_and(|v| v.value.as_deref() == value)
            });
            if !earlier {
                listed.push(Listed {
                    name: name.clone(),
                    holder,
                });
            }
        }
        listed
    }

    /// Deletes the lock on `resource` on every master whatever value holds
    /// it, leaving every fence counter as it is (docs/design.md#listing-and-force-release):
    /// the next holder's token is larger, so a fenced store refuses the old
    /// holder. Returns how many masters held it.
    ///
    /// # Errors
    /// `Unavailable` when fewer than a quorum of masters answered (the
    /// deletes still went to all).
    pub async fn force_release(&self, resource: &str) -> Result<usize, Error> {
        let key = self.lock_key(resource);
        let calls = self.nodes.iter().map(|node| node.force_unlock(&key));
        let (answers, _) = gather(calls, |_| false, self.config.node_timeout).await;
        let answers: Vec<Option<bool>> = answers.into_iter().map(|a| a.and_then(Result::ok)).collect();
        self.tally(&answers)
    }
}
