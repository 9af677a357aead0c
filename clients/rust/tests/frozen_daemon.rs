//! The daemon frozen with SIGSTOP under a `Hold` session and a leader: it
//! sends nothing, not even LOST, so each must be told by the client's own
//! timer, before its last validity (counted from when its message arrived)
//! runs out, and by at most `LOST_MARGIN` (docs/design.md#sessions).
//!
//! Without `REDLOCKD_ADDR` the test runs itself again under
//! `scripts/with-dev-daemon`: a daemon of its own, since it freezes it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use redlockd_client::{CampaignOptions, Client, HoldOptions, LOST_MARGIN, Lost};
use tokio::time::Instant;

const TTL: Duration = Duration::from_millis(1500);

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `test` of this binary again under scripts/with-dev-daemon.
fn under_dev_daemon(test: &str) {
    let exe = std::env::current_exe().unwrap();
    let mut command = Command::new(repository().join("scripts/with-dev-daemon"));
    command
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"]);
    // The daemon this build made (<target>/debug/redlockd beside deps/).
    if let Some(daemon) = exe.parent().and_then(Path::parent).map(|debug| debug.join("redlockd"))
        && daemon.exists()
        && std::env::var_os("REDLOCKD_BIN").is_none()
    {
        command.env("REDLOCKD_BIN", daemon);
    }
    let status = command.status().expect("scripts/with-dev-daemon runs");
    assert!(status.success(), "{test} under with-dev-daemon: {status}");
}

/// Sends `signal` (STOP, CONT) to the daemon with-dev-daemon started.
fn signal_daemon(signal: &str) {
    let pid = std::env::var("REDLOCKD_DEV_DAEMON_PID").expect("REDLOCKD_DEV_DAEMON_PID from with-dev-daemon");
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(&pid)
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}: {status}");
}

/// Continues the daemon when dropped, even on a failed assertion, so that
/// with-dev-daemon can stop it.
struct Frozen;

impl Drop for Frozen {
    fn drop(&mut self) {
        signal_daemon("CONT");
    }
}

/// Polls `valid_until` until it is gone (the loss) and returns the last
/// one seen with the instant the loss was seen, or first resolves `lost`.
async fn told<F: Future<Output = String>>(
    valid_until: impl Fn() -> Option<Instant>,
    lost: F,
) -> (String, Instant, Instant) {
    let mut last = valid_until().expect("held at the freeze");
    tokio::pin!(lost);
    loop {
        tokio::select! {
            biased;
            reason = &mut lost => return (reason, Instant::now(), last),
            () = tokio::time::sleep(Duration::from_millis(1)) => {
                if let Some(until) = valid_until() {
                    last = until;
                }
            }
        }
    }
}

#[test]
fn a_holder_and_a_leader_whose_daemon_is_frozen_are_told_before_their_own_deadline() {
    if std::env::var_os("REDLOCKD_ADDR").is_none() {
        return under_dev_daemon("a_holder_and_a_leader_whose_daemon_is_frozen_are_told_before_their_own_deadline");
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = Client::from_env().await.expect("a daemon at REDLOCKD_ADDR");
        let suffix = fastrand::u64(..);
        let lock = client
            .hold(&format!("examples/rs-frozen-{suffix}"), HoldOptions::new().ttl(TTL))
            .await
            .unwrap();
        let leader = client
            .campaign(
                &format!("examples/rs-frozen-election-{suffix}"),
                "pod-a",
                CampaignOptions::new().ttl(TTL),
            )
            .await
            .unwrap();
        tokio::time::sleep(TTL / 2).await; // an extension or two came
        signal_daemon("STOP");
        let _continue = Frozen;
        let frozen_at = Instant::now();
        let both = async {
            tokio::join!(
                told(|| lock.valid_until(), lock.lost()),
                told(|| leader.valid_until(), async { leader.lost().await.to_string() }),
            )
        };
        let (holder, leading) = tokio::time::timeout(TTL + Duration::from_secs(5), both)
            .await
            .expect("still held with a frozen daemon");
        for (what, (reason, at, until)) in [("the holder", holder), ("the leader", leading)] {
            // `until` is the last validity given (an extension on its way at
            // the freeze may have moved it on).
            assert!(until > frozen_at, "{what}: valid until before the freeze");
            println!(
                "frozen_daemon: {what} told {:?} before valid_until, {:?} after the freeze ({reason})",
                until.saturating_duration_since(at),
                at - frozen_at
            );
            assert!(at < until, "{what} told {:?} after its deadline", at - until);
            assert!(
                until - at <= LOST_MARGIN,
                "{what} told {:?} before its deadline, more than the margin",
                until - at
            );
            assert!(reason.contains("the client's own deadline"), "{what}: {reason}");
        }
        assert!(matches!(leader.lost().await, Lost::Deadline));
        assert!(lock.is_lost());
    });
}
