//! `redlockctl run`: hold a lock through a `Hold` session while a command
//! runs — the counterpart of `etcdctl lock NAME CMD` and `consul lock`.
//!
//! The command gets `REDLOCKD_FENCING_TOKEN`, `REDLOCKD_RESOURCE` and (for a permit) `REDLOCKD_SLOT` in its
//! environment. If the lock is lost, the command gets SIGTERM, then SIGKILL
//! after `--grace`. Exit codes: the command's own when it finished while
//! the lock was held (128 + signal if a signal ended it); 1 the lock was not
//! acquired within `--wait`; 2 an error (bad arguments, daemon unreachable,
//! UNAVAILABLE…); 3 the lock was lost (LOST, the session broke, or its
//! validity ran out by our own clock) and the command was stopped.

use std::process::ExitCode;
use std::time::Duration;

use redlockd_client::{Client, Error, HoldOptions};
use tokio::process::{Child, Command};
use tokio::time::Instant;

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

/// Runs the job; the exit code follows the module docs. The session is the
/// client library's `HeldLock`.
pub async fn run(client: Client, job: Job) -> ExitCode {
    let mut options = HoldOptions::new().wait(job.wait).owner(job.owner.clone());
    if let Some(ttl) = job.ttl {
        options = options.ttl(ttl);
    }
    if job.shared {
        options = options.shared();
    }
    if job.permits > 0 {
        options = options.permits(job.permits);
    }
    if !job.reentrancy_key.is_empty() {
        options = options.reentrancy_key(job.reentrancy_key.clone());
    }
    if let Some(lock_delay) = job.lock_delay {
        options = options.lock_delay(lock_delay);
    }
    let lock = match client.hold(&job.resource, options).await {
        Ok(lock) => lock,
        Err(Error::NotAcquired(reason)) => {
            eprintln!("redlockctl: {} not acquired: {reason}", job.resource);
            return ExitCode::from(1);
        }
        Err(error) => {
            eprintln!("redlockctl: {error}");
            return ExitCode::from(2);
        }
    };
    let mut child = match Command::new(&job.command[0])
        .args(&job.command[1..])
        .env("REDLOCKD_FENCING_TOKEN", lock.fencing_token().to_string())
        .env("REDLOCKD_RESOURCE", &job.resource)
        .env("REDLOCKD_SLOT", lock.slot().to_string())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("redlockctl: cannot run {}: {e}", job.command[0]);
            return ExitCode::from(2);
        }
    };
    loop {
        // Our own clock: if the daemon or the network is stuck, LOST may
        // never come, but the validity still runs out.
        let valid_until = lock.valid_until().unwrap_or_else(Instant::now);
        tokio::select! {
            status = child.wait() => {
                // The daemon releases at once.
                let _ = tokio::time::timeout(Duration::from_secs(5), lock.release()).await;
                return ExitCode::from(exit_code(status));
            }
            () = tokio::time::sleep_until(valid_until) => {
                if lock.valid_until().is_some_and(|until| until > Instant::now()) {
                    continue; // extended meanwhile
                }
                eprintln!("redlockctl: the lock's validity ran out without an extension; stopping the command");
                break;
            }
            reason = lock.lost() => {
                eprintln!("redlockctl: lock on {} lost: {reason}; stopping the command", job.resource);
                break;
            }
        }
    }
    stop(&mut child, job.grace).await;
    ExitCode::from(EXIT_LOST)
}

/// The command's exit code, or 128 + the signal that killed it (as shells do).
pub fn exit_code(status: std::io::Result<std::process::ExitStatus>) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => u8::try_from(code).unwrap_or(255),
            (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
            (None, None) => 255,
        },
        Err(_) => 2,
    }
}

/// SIGTERM, then SIGKILL after `grace`.
pub async fn stop(child: &mut Child, grace: Duration) {
    if let Some(pid) = child.id() {
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status().await;
    }
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}
