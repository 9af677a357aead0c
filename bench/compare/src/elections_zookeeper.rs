//! ZooKeeper's side of (e) and (f) (docs/performance.md#elections), on the
//! server of `zookeeper.rs`, with Apache Curator's recipes in bench/java's
//! `bench.CuratorElection`: a candidate is a JVM of its own (one session of
//! the election's TTL) in a `LeaderLatch`, killed with SIGKILL; it says
//! `elected SEQ` on stdout, writes the leader's value to an ephemeral znode
//! and sets each hex line it reads on stdin as that znode's data (the
//! proclaim). The observers are `CuratorCache`s of that znode in one more
//! JVM, over `connections` sessions, each line `INDEX HEX` a value one was
//! told. A killed candidate's latch node, like etcd's leader key, goes only
//! when its session expires.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::candidate::{Ballot, Candidate, Socket};
use crate::elections_types::{Electorate, Values};
use crate::peer::Peer;

/// How long the observers' JVM has to load every cache.
const READY_LIMIT: Duration = Duration::from_secs(90);

/// One election on a running ZooKeeper.
pub struct ZookeeperElection {
    /// The server's connect string.
    pub connect: String,
    /// `java` and the arguments that start `bench.CuratorElection`.
    pub java: Arc<Peer>,
    /// The election's znode: its latch and its value are under it.
    pub election: String,
    /// Each client's session timeout (ZooKeeper grants 2 to 20 ticks).
    pub session: Duration,
}

impl ZookeeperElection {
    fn jvm(&self, role: &str) -> Command {
        let mut command = Command::new(&self.java.program);
        command
            .args(&self.java.args)
            .args(["--role", role, "--urls", &self.connect])
            .args(["--value", &format!("{}/value", self.election)])
            .args(["--session-ms", &self.session.as_millis().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }
}

impl Electorate for ZookeeperElection {
    fn candidate(&self, id: usize) -> Candidate {
        let mut command = self.jvm("candidate");
        command.args(["--latch", &format!("{}/latch", self.election)]);
        Candidate::spawn(id, move |socket, mut ballot| async move {
            command.args(["--id", &ballot.name]);
            if let Err(e) = campaign(command, &socket, &mut ballot).await {
                ballot.failed(e);
            }
        })
    }

    async fn observers(&self, n: usize, connections: usize) -> anyhow::Result<Vec<Values>> {
        let mut command = self.jvm("observers");
        command.args(["--observers", &n.to_string()]);
        command.args(["--connections", &connections.clamp(1, n.max(1)).to_string()]);
        let mut child = command.spawn().context("starting the observers' JVM")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let errors = read_all(child.stderr.take());
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| mpsc::unbounded_channel()).unzip();
        let (ready_tx, ready) = oneshot::channel();
        tokio::spawn(route(stdout, senders, ready_tx));
        match tokio::time::timeout(READY_LIMIT, ready).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => bail!("the observers' JVM exited: {}", errors_of(errors).await),
            Err(_) => bail!("the observers' caches were not loaded within {READY_LIMIT:?}"),
        }
        // The JVM lives while any stream does (killed when the last goes).
        let child = Arc::new(Mutex::new(child));
        Ok(receivers
            .into_iter()
            .map(|rx| {
                let keep = child.clone();
                UnboundedReceiverStream::new(rx)
                    .map(move |value| {
                        let _ = &keep;
                        value
                    })
                    .boxed()
            })
            .collect())
    }
}

/// Routes the observers' lines to their streams; "ready" once loaded.
async fn route(
    stdout: impl AsyncRead + Unpin,
    senders: Vec<mpsc::UnboundedSender<anyhow::Result<Vec<u8>>>>,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut lines = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line == "ready" {
            if let Some(tx) = ready.take() {
                let _ = tx.send(());
            }
            continue;
        }
        let parsed = line
            .split_once(' ')
            .and_then(|(i, hex)| Some((i.parse::<usize>().ok()?, unhex(hex)?)));
        if let Some((i, value)) = parsed
            && let Some(tx) = senders.get(i)
        {
            let _ = tx.send(Ok(value));
        }
    }
    for tx in &senders {
        let _ = tx.send(Err(anyhow!("the observers' JVM exited")));
    }
}

/// Runs one candidate's JVM until killed: says when elected, then writes
/// what it is given to proclaim to the JVM's stdin.
async fn campaign(mut command: Command, socket: &Socket, ballot: &mut Ballot) -> anyhow::Result<()> {
    let mut child = command.spawn().context("starting a candidate's JVM")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let errors = read_all(child.stderr.take());
    socket.process(child)?;
    let mut lines = BufReader::new(stdout).lines();
    let mut leading = false;
    loop {
        tokio::select! {
            line = lines.next_line() => match line?.as_deref() {
                Some(l) if l.starts_with("session ") => {
                    if ballot.name == "candidate-0" {
                        crate::say(format!("    ZooKeeper granted a session of {} ms", &l[8..]));
                    }
                }
                Some(l) if l.starts_with("elected ") => {
                    ballot.elected(l[8..].parse().context("the latch node's sequence number")?);
                    leading = true;
                }
                Some("lost") => bail!("the latch says it no longer leads"),
                Some(other) => bail!("unexpected line {other:?}"),
                None => bail!("its JVM exited: {}", errors_of(errors).await),
            },
            value = ballot.proclaims.recv(), if leading => {
                let Some(value) = value else { return Ok(()) };
                stdin.write_all(format!("{}\n", hex(&value)).as_bytes()).await?;
                stdin.flush().await?;
            }
        }
    }
}

/// Reads a child's stderr to its end, in a task of its own.
fn read_all(stderr: Option<tokio::process::ChildStderr>) -> JoinHandle<String> {
    tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut text).await;
        }
        text
    })
}

async fn errors_of(errors: JoinHandle<String>) -> String {
    match tokio::time::timeout(Duration::from_secs(2), errors).await {
        Ok(Ok(text)) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => "(nothing on stderr)".into(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
