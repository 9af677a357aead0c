//! rslock (crates.io, the Redlock crate a Rust service would embed), in this
//! process, on the same five masters: one `LockManager` shared by every
//! client task, as an application shares one.

use std::time::Duration;

use rslock::{LockError, LockManager};

use crate::drive::Locker;

/// The lease TTL of workloads (a)-(c), as for redlockd.
const TTL: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct RsLocker {
    /// `lock` with no retry: the single attempt of (a) and (b).
    once: LockManager,
    /// The library's defaults (3 retries, random delay up to 200 ms), used
    /// through `acquire`, which loops until held: (c).
    waiting: LockManager,
}

impl RsLocker {
    pub fn new(urls: &[String]) -> RsLocker {
        let mut once = LockManager::new(urls.to_vec());
        once.set_retry(0, Duration::from_millis(200));
        RsLocker {
            once,
            waiting: LockManager::new(urls.to_vec()),
        }
    }
}

impl Locker for RsLocker {
    type Held = rslock::Lock;

    async fn once(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        match self.once.lock(name.as_str(), TTL).await {
            Ok(lock) => Ok(Some(lock)),
            Err(LockError::Unavailable) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn waiting(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        Ok(Some(self.waiting.acquire(name.as_str(), TTL).await?.lock))
    }

    async fn release(&self, held: Self::Held) -> anyhow::Result<()> {
        held.release().await;
        Ok(())
    }
}
