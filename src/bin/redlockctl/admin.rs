//! `redlockctl locks ls` (the `admin` scope), and how a lock's holder is
//! printed there and by `inspect`.

use std::time::Duration;

use redlockd_client::Client;
use redlockd_client::proto::{Holder, ListLocksRequest};

use crate::CallError;

/// Prints every lock held under `prefix`, a line each, page by page.
pub async fn list_locks(connection: &Client, prefix: String, page_size: u32) -> Result<bool, CallError> {
    let mut admin = connection.admin();
    let mut page_token = String::new();
    // A lock may come on two pages (SCAN returns a key twice while a
    // master's table is resized): it is printed once.
    let mut printed = std::collections::HashSet::new();
    loop {
        let page = admin
            .list_locks(ListLocksRequest {
                prefix: prefix.clone(),
                page_size,
                page_token,
            })
            .await?
            .into_inner();
        for lock in page.locks {
            if !printed.insert(lock.resource.clone()) {
                continue;
            }
            let holder = lock.holder.unwrap_or_default();
            out!("resource={} {}", lock.resource, holder_fields(&holder));
        }
        if page.next_page_token.is_empty() {
            return Ok(true);
        }
        page_token = page.next_page_token;
    }
}

pub fn millis(d: Option<prost_types::Duration>) -> u128 {
    d.and_then(|d| Duration::try_from(d).ok())
        .unwrap_or_default()
        .as_millis()
}

/// A holder as `key=value` fields (the owner quoted: it may hold spaces).
pub fn holder_fields(holder: &Holder) -> String {
    let since = holder
        .since
        .as_ref()
        .map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000);
    format!(
        "owner={:?} tenant={} daemon={} since_ms={since} fencing_token={} ttl_ms={}",
        holder.owner,
        holder.tenant,
        holder.daemon,
        holder.fencing_token,
        millis(holder.ttl)
    )
}
