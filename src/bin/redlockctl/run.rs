//! `redlockctl run`: hold a lock through a `Hold` session while a command
//! runs — the counterpart of `etcdctl lock NAME CMD` and `consul lock`.
//!
//! The command gets `REDLOCKD_FENCING_TOKEN` and `REDLOCKD_RESOURCE` in its
//! environment. If the lock is lost, the command gets SIGTERM, then SIGKILL
//! after `--grace`. Exit codes: the command's own when it finished while
//! the lock was held (128 + signal if a signal ended it); 1 the lock was not
//! acquired within `--wait`; 2 an error (bad arguments, daemon unreachable,
//! UNAVAILABLE…); 3 the lock was lost (LOST, the session broke, or its
//! validity ran out by our own clock) and the command was stopped.

use std::process::ExitCode;
use std::time::Duration;

use redlockd::api::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart, hold_request};
use redlockd::api::service::wire_duration as wire;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// The exit code when the lock was lost.
const EXIT_LOST: u8 = 3;

/// What `run` was asked to do.
pub struct Job {
    pub resource: String,
    pub ttl: Option<Duration>,
    pub wait: Duration,
    pub owner: String,
    pub grace: Duration,
    pub command: Vec<String>,
}

/// Runs the job; the exit code follows the module docs.
pub async fn run(mut client: crate::connect::Client, job: Job) -> ExitCode {
    let (tx, requests) = mpsc::channel(1);
    let start = HoldStart {
        resource: job.resource.clone(),
        ttl: job.ttl.map(wire),
        wait: Some(wire(job.wait)),
        owner: job.owner.clone(),
        max_hold: None,
    };
    let _ = tx
        .send(HoldRequest {
            request: Some(hold_request::Request::Start(start)),
        })
        .await;
    let mut events = match client.hold(ReceiverStream::new(requests)).await {
        Ok(response) => response.into_inner(),
        Err(status) => return fail(&status),
    };
    let (token, mut valid_until) = match events.message().await {
        Ok(Some(event)) if event.event() == HoldEvent::Acquired => {
            (event.lease.as_ref().map_or(0, |l| l.fencing_token), valid_until(&event))
        }
        Ok(Some(event)) => {
            eprintln!("redlockctl: {} not acquired: {}", job.resource, event.reason);
            return ExitCode::from(1);
        }
        Ok(None) => {
            eprintln!("redlockctl: the daemon ended the session");
            return ExitCode::from(2);
        }
        Err(status) => return fail(&status),
    };
    let mut child = match Command::new(&job.command[0])
        .args(&job.command[1..])
        .env("REDLOCKD_FENCING_TOKEN", token.to_string())
        .env("REDLOCKD_RESOURCE", &job.resource)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("redlockctl: cannot run {}: {e}", job.command[0]);
            return ExitCode::from(2);
        }
    };
    loop {
        tokio::select! {
            status = child.wait() => {
                // Half-close: the daemon releases at once.
                drop(tx);
                let _ = tokio::time::timeout(Duration::from_secs(5), events.message()).await;
                return ExitCode::from(exit_code(status));
            }
            // Our own clock: if the daemon or the network is stuck, LOST may
            // never come, but the validity still runs out.
            () = tokio::time::sleep_until(valid_until) => {
                eprintln!("redlockctl: the lock's validity ran out without an extension; stopping the command");
                break;
            }
            event = events.message() => match event {
                Ok(Some(e)) if e.event() == HoldEvent::Extended => {
                    valid_until = valid_until_of(&e, valid_until);
                    continue;
                }
                Ok(Some(e)) => {
                    eprintln!("redlockctl: lock on {} {:?}: {}; stopping the command", job.resource, e.event(), e.reason);
                    break;
                }
                Ok(None) | Err(_) => {
                    eprintln!("redlockctl: the session with the daemon broke; stopping the command");
                    break;
                }
            },
        }
    }
    stop(&mut child, job.grace).await;
    ExitCode::from(EXIT_LOST)
}

/// When a lease message's validity runs out, counted from its receipt.
fn valid_until(event: &HoldResponse) -> tokio::time::Instant {
    valid_until_of(event, tokio::time::Instant::now())
}

fn valid_until_of(event: &HoldResponse, otherwise: tokio::time::Instant) -> tokio::time::Instant {
    let validity = event
        .lease
        .as_ref()
        .and_then(|l| l.validity)
        .and_then(|v| Duration::try_from(v).ok());
    validity.map_or(otherwise, |v| tokio::time::Instant::now() + v)
}

/// The command's exit code, or 128 + the signal that killed it (as shells do).
fn exit_code(status: std::io::Result<std::process::ExitStatus>) -> u8 {
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
async fn stop(child: &mut Child, grace: Duration) {
    if let Some(pid) = child.id() {
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status().await;
    }
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

fn fail(status: &tonic::Status) -> ExitCode {
    eprintln!("redlockctl: {:?}: {}", status.code(), status.message());
    ExitCode::from(2)
}
