//! The script cache as proof of process (docs/design.md#process-identity):
//! this daemon's variants of ROUND (by master or slot, and by cluster
//! primary) and HAND_OFF for one position, and
//! whether they may be used now.
//!
//! Variants are made afresh (a new nonce, so new SHA-1s) whenever they are
//! loaded into other processes than the last ones. That matters where a
//! verified process can stop being verified and come back with its script
//! cache intact: a primary demoted by a failover and promoted again (a
//! failback) kept the scripts it was given, but its data is a copy of its
//! replacement's. Loaded anew after the failover, the variants in use are
//! in the processes verified since, not in that one: there they answer
//! `NOSCRIPT`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fred::prelude::{ClientLike, Value};
use fred::types::{ClusterHash, CustomCommand};

use super::scripts::{Script, cached_variant_by_primary, cached_variants};

/// One set of variants, and the identity of the processes they are for (a
/// master's `run_id`; a cluster's primaries' `run_id:master_replid`,
/// joined).
pub(super) struct Variants {
    pub(super) round: Script,
    pub(super) by_primary: Script,
    pub(super) hand_off: Script,
    loaded_for: String,
}

impl Variants {
    /// New variants for `identity`, with a nonce of their own.
    fn fresh(identity: &str) -> Variants {
        let nonce = crate::redlock::LockValue::random();
        let (round, hand_off) = cached_variants(nonce.expose());
        Variants {
            round,
            by_primary: cached_variant_by_primary(nonce.expose()),
            hand_off,
            loaded_for: identity.to_owned(),
        }
    }

    /// Loads them into the process `client` talks to (on a cluster, a
    /// client of one primary: `with_cluster_node`; ROUND by primary only
    /// there).
    pub(super) async fn load_into(&self, client: &impl ClientLike) -> Result<(), fred::error::Error> {
        let by_primary = client.is_clustered().then_some(&self.by_primary);
        for script in [&self.round, &self.hand_off].into_iter().chain(by_primary) {
            script_command(client, vec!["LOAD", script.lua.as_str()]).await?;
        }
        Ok(())
    }
}

/// `SCRIPT <args…>` on the process `client` talks to (by a custom command:
/// fred's `LuaInterface` is not there for a client of one cluster node).
pub(super) async fn script_command(client: &impl ClientLike, args: Vec<&str>) -> Result<Value, fred::error::Error> {
    let script = CustomCommand::new_static("SCRIPT", ClusterHash::FirstKey, false);
    client.custom(script, args).await
}

/// Whether the variants may be used, and which.
#[derive(Default)]
pub(super) struct Proof {
    ok: AtomicBool,
    variants: Mutex<Option<Arc<Variants>>>,
}

impl Proof {
    /// The variants to call, while they may be used.
    pub(super) fn in_use(&self) -> Option<Arc<Variants>> {
        if !self.ok.load(Ordering::SeqCst) {
            return None;
        }
        self.last()
    }

    fn last(&self) -> Option<Arc<Variants>> {
        self.variants.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// They may not be used (a re-made connection, `NOSCRIPT`, a probe
    /// that did not verify the process) until `install` again.
    pub(super) fn withdraw(&self) {
        self.ok.store(false, Ordering::SeqCst);
    }

    /// Whether the variants in use are for the processes of `identity`:
    /// then the probe has nothing to load.
    pub(super) fn holds_for(&self, identity: &str) -> bool {
        self.in_use().is_some_and(|v| v.loaded_for == identity)
    }

    /// The variants to load into the processes of `identity`, which this
    /// daemon verified: the last ones again when they were for the very
    /// same processes (loading them again adds nothing to the script
    /// cache), else fresh ones, which no other process has.
    pub(super) fn to_load(&self, identity: &str) -> Arc<Variants> {
        match self.last() {
            Some(last) if last.loaded_for == identity => last,
            _ => Arc::new(Variants::fresh(identity)),
        }
    }

    /// `variants` (from `to_load`) were loaded into every process they are
    /// for: use them.
    pub(super) fn install(&self, variants: Arc<Variants>) {
        *self.variants.lock().unwrap_or_else(PoisonError::into_inner) = Some(variants);
        self.ok.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
#[path = "proof_tests.rs"]
mod tests;
