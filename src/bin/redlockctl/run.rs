//! `redlockctl run`: hold a lock through a `Hold` session while a command
//! runs — the counterpart of `etcdctl lock NAME CMD`, `consul lock` and
//! `flock(1)`. The command is supervised as `supervise.rs` says: the lock
//! is released only once no process of the command is left.
//!
//! The command gets `REDLOCKD_FENCING_TOKEN`, `REDLOCKD_RESOURCE` and (for a permit) `REDLOCKD_SLOT` in its
//! environment. If the lock is lost, the command's process group gets
//! SIGTERM, then SIGKILL after `--grace`. Exit codes: the command's own when
//! it finished while the lock was held (128 + signal if a signal ended it,
//! including one redlockctl forwarded); 1 the lock was not acquired within
//! `--wait`; 2 an error (bad arguments, daemon unreachable, UNAVAILABLE…);
//! 3 the lock was lost (LOST, the session broke, or its validity ran out by
//! our own clock) and the command was stopped; 128 + signal when a signal
//! came before the command started.

use std::process::ExitCode;
use std::time::Duration;

use redlockd_client::{Client, Error, HeldLock, HoldOptions};

use crate::supervise::{Ended, Group, Signals};

/// The exit code when the lock was lost.
pub const EXIT_LOST: u8 = 3;

/// What `run` was asked to do.
pub struct Job {
    pub resource: String,
    pub ttl: Option<Duration>,
    pub wait: Duration,
    pub owner: String,
    /// Held shared (a reader).
    pub shared: bool,
    /// One of this many permits of a semaphore (0: a lock).
    pub permits: u32,
    /// The reentrancy key (empty: none).
    pub reentrancy_key: String,
    /// Kept this long after the session ends without a release.
    pub lock_delay: Option<Duration>,
    pub grace: Duration,
    pub command: Vec<String>,
}

impl Job {
    fn options(&self) -> HoldOptions {
        let mut options = HoldOptions::new().wait(self.wait).owner(self.owner.clone());
        if let Some(ttl) = self.ttl {
            options = options.ttl(ttl);
        }
        if self.shared {
            options = options.shared();
        }
        if self.permits > 0 {
            options = options.permits(self.permits);
        }
        if !self.reentrancy_key.is_empty() {
            options = options.reentrancy_key(self.reentrancy_key.clone());
        }
        if let Some(lock_delay) = self.lock_delay {
            options = options.lock_delay(lock_delay);
        }
        options
    }
}

/// Runs the job; the exit code follows the module docs. The session is the
/// client library's `HeldLock`.
pub async fn run(client: Client, job: Job, mut signals: Signals) -> ExitCode {
    let held = tokio::select! {
        held = client.hold(&job.resource, job.options()) => held,
        signal = signals.stop_requested() => {
            // Nothing ran; a lock granted meanwhile goes with the session.
            return ExitCode::from(signal_exit(signal));
        }
    };
    let lock = match held {
        Ok(lock) => lock,
        Err(Error::NotAcquired(reason)) => {
            say!("{} not acquired: {reason}", job.resource);
            return ExitCode::from(1);
        }
        Err(error) => {
            say!("{error}");
            return ExitCode::from(2);
        }
    };
    let env = [
        ("REDLOCKD_FENCING_TOKEN", lock.fencing_token().to_string()),
        ("REDLOCKD_RESOURCE", job.resource.clone()),
        ("REDLOCKD_SLOT", lock.slot().to_string()),
    ];
    let group = match Group::spawn(&job.command, &env) {
        Ok(group) => group,
        Err(e) => {
            say!("cannot run {}: {e}", job.command[0]);
            let _ = tokio::time::timeout(Duration::from_secs(5), lock.release()).await;
            return ExitCode::from(2);
        }
    };
    match group
        .supervise(&mut signals, lost(&lock, &job.resource), job.grace)
        .await
    {
        Ended::Exited(code) => {
            // No process of the command is left: the daemon releases at once.
            let _ = tokio::time::timeout(Duration::from_secs(5), lock.release()).await;
            ExitCode::from(code)
        }
        Ended::Lost => ExitCode::from(EXIT_LOST),
    }
}

/// Resolves when the lock is lost: LOST from the daemon, or the client's
/// own deadline before its validity runs out (`HeldLock::lost`: if the
/// daemon or the network is stuck, LOST may never come).
async fn lost(lock: &HeldLock, resource: &str) -> String {
    format!("lock on {resource} lost: {}", lock.lost().await)
}

/// The exit code of a process a signal ended, as shells report it.
pub fn signal_exit(signal: rustix::process::Signal) -> u8 {
    u8::try_from(128 + signal.as_raw()).unwrap_or(255)
}
