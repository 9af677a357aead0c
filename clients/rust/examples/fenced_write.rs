//! A fenced write with the Rust client: two holders take turns on one lock,
//! and a store that remembers the largest fencing token it has seen refuses
//! a write from a holder whose lock has been superseded.
//!
//!     bash examples/rust/run.sh          # against a throwaway daemon

use std::time::Duration;

use redlockd_client::{AcquireOptions, Client, HoldOptions};

/// A store that rejects writes carrying a token older than one it took.
#[derive(Default)]
struct FencedStore {
    highest: u64,
    rows: Vec<&'static str>,
}

impl FencedStore {
    fn write(&mut self, token: u64, row: &'static str) -> bool {
        if token < self.highest {
            return false; // a stale holder: its lock was superseded
        }
        self.highest = token;
        self.rows.push(row);
        true
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), redlockd_client::Error> {
    let mut store = FencedStore::default();
    let client = Client::from_env().await?; // REDLOCKD_ADDR (+ REDLOCKD_TOKEN and TLS files, if set)
    let resource = "examples/ledger";
    let wait = Duration::from_secs(10);

    // A session: lock.lost() resolves if the lock is lost; release says so.
    let lock = client.hold(resource, HoldOptions::new().wait(wait)).await?;
    let first = lock.fencing_token();
    assert!(store.write(first, "first"));
    lock.release().await?;

    // acquire/release by hand; contention is a value (None), not an error.
    let lease = client
        .acquire(resource, AcquireOptions::new().wait(wait))
        .await?
        .expect("a free lock");
    assert!(lease.fencing_token() > first);
    assert!(
        client.acquire(resource, AcquireOptions::new()).await?.is_none(),
        "a second holder"
    );
    assert!(store.write(lease.fencing_token(), "second"));
    let second = lease.fencing_token();
    assert!(lease.release().await?);

    // The first holder, paused past its lock, comes back: the store says no.
    assert!(!store.write(first, "stale"), "the store took a stale token");
    assert_eq!(store.rows, ["first", "second"]);
    println!("ok: tokens {first} < {second}; the stale write was refused");
    Ok(())
}
