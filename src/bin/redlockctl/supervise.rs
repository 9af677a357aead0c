//! The command `run` and `elect` hold a lock or a leadership for, supervised
//! as tini and `flock(1)` would: the lock is never free while any process of
//! the command still runs (docs/operations.md#redlockctl-run-and-elect).
//!
//! - The command runs in a process group of its own, so its children are
//!   signalled with it.
//! - SIGTERM, SIGINT and SIGHUP to redlockctl are forwarded to the group;
//!   SIGKILL follows after the grace. Lock loss sends SIGTERM the same way,
//!   by the system call (no `kill` binary: the image has none).
//! - redlockctl is the subreaper of everything the command starts: orphans
//!   come back to it and are reaped, and as PID 1 of a container it reaps
//!   every orphan, as tini does.
//! - Only when no process of the group is left does the caller release the
//!   lock or resign. When the command itself ends, whatever it left running
//!   in its group is stopped first.
//!
//! A process that leaves the group (`setsid`, `setpgid`) is beyond this
//! reach, as it is beyond `flock`'s.

use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use tokio::signal::unix::{SignalKind, signal};

/// How often a group is looked at while it ends, besides each SIGCHLD: a
/// grandchild reaped by its own parent sends redlockctl none.
const GONE_CHECK: Duration = Duration::from_millis(20);

/// The signals redlockctl handles, registered before anything runs: one
/// that comes while it waits for the lock ends the wait, one that comes
/// later goes to the command.
pub struct Signals {
    term: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    child: tokio::signal::unix::Signal,
}

impl Signals {
    /// Registers the handlers and makes redlockctl the subreaper of what it
    /// starts.
    ///
    /// # Errors
    /// When a handler cannot be registered or the subreaper not set.
    pub fn install() -> io::Result<Signals> {
        // PR_SET_CHILD_SUBREAPER takes a flag; any process id sets it.
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
            child: signal(SignalKind::child())?,
        })
    }

    /// The next of SIGTERM, SIGINT and SIGHUP.
    pub async fn stop_requested(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::TERM,
            _ = self.interrupt.recv() => Signal::INT,
            _ = self.hangup.recv() => Signal::HUP,
        }
    }

    /// The next signal: a child ended (`None`), or a stop was asked for.
    async fn next(&mut self) -> Option<Signal> {
        tokio::select! {
            _ = self.child.recv() => None,
            _ = self.term.recv() => Some(Signal::TERM),
            _ = self.interrupt.recv() => Some(Signal::INT),
            _ = self.hangup.recv() => Some(Signal::HUP),
        }
    }
}

/// How the command's time under the lock ended.
pub enum Ended {
    /// The command ended (by itself, or after a signal redlockctl
    /// forwarded): its exit code, or 128 + the signal that ended it.
    Exited(u8),
    /// The lock or leadership was lost and the command stopped.
    Lost,
}

/// The command, running in a process group of its own.
pub struct Group {
    /// The command's process, which leads the group (its id is the group's).
    leader: Pid,
    /// How the leader ended, once reaped.
    status: Option<WaitStatus>,
}

impl Group {
    /// Starts `command` (program and arguments) with `env` added, in a new
    /// process group.
    ///
    /// # Errors
    /// When it cannot be started.
    pub fn spawn(command: &[String], env: &[(&str, String)]) -> io::Result<Group> {
        let child = std::process::Command::new(&command[0])
            .args(&command[1..])
            .envs(env.iter().map(|(name, value)| (name, value)))
            .process_group(0)
            .spawn()?;
        // Reaped by `reap` (waitpid on any child), never through `child`.
        let leader = Pid::from_child(&child);
        Ok(Group { leader, status: None })
    }

    /// Reaps every child that ended (the leader, orphans handed to
    /// redlockctl as their subreaper or PID 1), keeping the leader's status.
    fn reap(&mut self) {
        while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
            if pid == self.leader {
                self.status = Some(status);
            }
        }
    }

    /// Whether any process of the group is left (zombies not yet reaped
    /// count: their parent still runs).
    fn alive(&self) -> bool {
        rustix::process::test_kill_process_group(self.leader).is_ok()
    }

    fn signal(&self, signal: Signal) {
        // ESRCH: the group is gone already.
        let _ = rustix::process::kill_process_group(self.leader, signal);
    }

    /// Runs until the command ends (`Exited`), `lost` resolves (`Lost`,
    /// after stopping the group) or a stop signal comes (forwarded, then
    /// `Exited` once the group is gone). Returns only when no process of
    /// the group is left.
    pub async fn supervise(
        mut self,
        signals: &mut Signals,
        lost: impl Future<Output = String>,
        grace: Duration,
    ) -> Ended {
        tokio::pin!(lost);
        loop {
            tokio::select! {
                signal = signals.next() => match signal {
                    Some(signal) => {
                        self.stop(signals, signal, grace).await;
                        return Ended::Exited(self.exit_code());
                    }
                    None => {
                        self.reap();
                        if self.status.is_some() {
                            // What the command left in its group goes with it.
                            if self.alive() {
                                self.stop(signals, Signal::TERM, grace).await;
                            }
                            return Ended::Exited(self.exit_code());
                        }
                    }
                },
                why = &mut lost => {
                    say!("{why}; stopping the command");
                    self.stop(signals, Signal::TERM, grace).await;
                    return Ended::Lost;
                }
            }
        }
    }

    /// Sends `first` to the group, SIGKILL after `grace` to what is left,
    /// and waits until nothing of it is left. Signals that come meanwhile
    /// are forwarded too.
    async fn stop(&mut self, signals: &mut Signals, first: Signal, grace: Duration) {
        self.signal(first);
        let kill_at = tokio::time::Instant::now() + grace;
        let mut killed = false;
        loop {
            self.reap();
            if !self.alive() {
                return;
            }
            tokio::select! {
                signal = signals.next() => {
                    if let Some(signal) = signal {
                        self.signal(signal);
                    }
                }
                () = tokio::time::sleep(GONE_CHECK) => {}
                () = tokio::time::sleep_until(kill_at), if !killed => {
                    say!("the command outlived its grace of {grace:?}; killing it");
                    self.signal(Signal::KILL);
                    killed = true;
                }
            }
        }
    }

    /// The leader's exit code, or 128 + the signal that ended it (as shells
    /// do).
    fn exit_code(&self) -> u8 {
        match self.status {
            Some(status) => match (status.exit_status(), status.terminating_signal()) {
                (Some(code), _) => u8::try_from(code).unwrap_or(255),
                (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
                (None, None) => 255,
            },
            // Reaped by someone else (it cannot be: redlockctl is its parent).
            None => 255,
        }
    }
}
