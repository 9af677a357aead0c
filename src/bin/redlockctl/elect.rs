//! `redlockctl elect NAME -- CMD`: campaign for an election and run a
//! command while leading — the counterpart of `etcdctl elect NAME CMD`
//! (docs/design.md#elections).
//!
//! The command gets `REDLOCKD_TERM` (send it with every write) and
//! `REDLOCKD_ELECTION` in its environment. When the leadership ends — LOST,
//! the daemon resigned for it, the stream broke, or the last `valid_for`
//! ran out by our own clock — the command's process group gets SIGTERM,
//! then SIGKILL after `--grace`; redlockctl resigns only once no process of
//! the command is left (`supervise.rs`). Exit codes: the command's own when it finished while leading
//! (128 + signal if a signal ended it), and then redlockctl resigns; 1 not
//! elected within `--wait`; 2 an error; 3 the leadership was lost and the
//! command stopped.

use std::process::ExitCode;
use std::time::Duration;

use redlockd_client::{CampaignOptions, Client, Error};

use crate::run::{EXIT_LOST, signal_exit};
use crate::supervise::{Ended, Group, Signals};

/// `redlockctl elect NAME [--value V] -- CMD ARGS…`
#[derive(clap::Args)]
pub struct ElectArgs {
    /// The election.
    name: String,
    /// What the leader publishes while it leads (`leader` and `observe`
    /// show it): an address, say.
    #[arg(long, default_value = "")]
    value: String,
    /// This candidate's name (default: the host name and this process's id).
    #[arg(long)]
    candidate: Option<String>,
    /// The term's time to live; the daemon renews it at about a third.
    #[arg(long, value_parser = humantime::parse_duration)]
    ttl: Option<Duration>,
    /// How long to wait to be elected (unset: as long as it takes).
    #[arg(long, value_parser = humantime::parse_duration)]
    wait: Option<Duration>,
    /// If redlockctl dies without resigning, the election stays taken this
    /// long (for resources that cannot check terms).
    #[arg(long, value_parser = humantime::parse_duration)]
    lock_delay: Option<Duration>,
    /// After SIGTERM, how long the command gets before SIGKILL.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    grace: Duration,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// Campaigns, runs the command while leading; the exit code follows the
/// module docs. The leadership is the client library's `Leadership`.
pub async fn elect(client: Client, args: ElectArgs, mut signals: Signals) -> ExitCode {
    let candidate = args.candidate.clone().unwrap_or_else(default_candidate);
    let mut options = CampaignOptions::new().value(args.value.clone());
    if let Some(ttl) = args.ttl {
        options = options.ttl(ttl);
    }
    if let Some(lock_delay) = args.lock_delay {
        options = options.lock_delay(lock_delay);
    }
    let campaign = client.campaign(&args.name, &candidate, options);
    let campaign = async {
        match args.wait {
            None => campaign.await,
            Some(wait) => match tokio::time::timeout(wait, campaign).await {
                Ok(elected) => elected,
                Err(_) => Err(Error::NotAcquired(format!("not elected within {wait:?}"))),
            },
        }
    };
    let elected = tokio::select! {
        elected = campaign => elected,
        signal = signals.stop_requested() => {
            // Nothing ran; a term won meanwhile goes with the stream.
            return ExitCode::from(signal_exit(signal));
        }
    };
    let leadership = match elected {
        Ok(leadership) => leadership,
        Err(Error::NotAcquired(reason)) => {
            say!("{} not elected: {reason}", args.name);
            return ExitCode::from(1);
        }
        Err(error) => {
            say!("{error}");
            return ExitCode::from(2);
        }
    };
    let env = [
        ("REDLOCKD_TERM", leadership.term().to_string()),
        ("REDLOCKD_ELECTION", args.name.clone()),
    ];
    let group = match Group::spawn(&args.command, &env) {
        Ok(group) => group,
        Err(e) => {
            say!("cannot run {}: {e}", args.command[0]);
            let _ = tokio::time::timeout(Duration::from_secs(5), leadership.resign()).await;
            return ExitCode::from(2);
        }
    };
    let lost = async { format!("leadership of {} ended ({})", args.name, leadership.lost().await) };
    match group.supervise(&mut signals, lost, args.grace).await {
        Ended::Exited(code) => {
            // No process of the command is left: the next candidate is
            // elected at once.
            let _ = tokio::time::timeout(Duration::from_secs(5), leadership.resign()).await;
            ExitCode::from(code)
        }
        Ended::Lost => ExitCode::from(EXIT_LOST),
    }
}

/// `<host name>/<pid>`: unique on a machine, and says where it runs.
fn default_candidate() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "redlockctl".to_owned());
    format!("{host}/{}", std::process::id())
}
