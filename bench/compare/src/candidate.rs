//! A candidate of (e) and (f) (docs/performance.md#elections), whichever
//! the system: the client's task, its own TCP connection or process (kept,
//! to be shut down or killed at its kill), and its word that it leads.

use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::anyhow;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint, Uri};

/// The word that a candidate leads.
pub struct Elected {
    /// When the word arrived.
    pub at: Instant,
    /// The term (redlockd) or the leader key's revision (etcd): both rise.
    pub term: u64,
}

/// A candidate: its task (the client), its connection or process, its word.
pub struct Candidate {
    task: JoinHandle<()>,
    socket: Socket,
    pub elected: oneshot::Receiver<anyhow::Result<Elected>>,
    /// Values for the leader to proclaim.
    pub proclaim: mpsc::UnboundedSender<Vec<u8>>,
}

impl Candidate {
    /// Spawns `client`, given the candidate's socket slot and ballot.
    pub fn spawn<F, Fut>(id: usize, client: F) -> Candidate
    where
        F: FnOnce(Socket, Ballot) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let socket = Socket::default();
        let (elected_tx, elected) = oneshot::channel();
        let (proclaim, proclaims) = mpsc::unbounded_channel();
        let ballot = Ballot {
            name: format!("candidate-{id}"),
            socket: socket.clone(),
            elected: Some(elected_tx),
            proclaims,
        };
        Candidate {
            task: tokio::spawn(client(socket.clone(), ballot)),
            socket,
            elected,
            proclaim,
        }
    }
}

impl Drop for Candidate {
    /// The client's process dies: its socket is shut down at once (the
    /// peer sees the connection end with no HTTP/2 frame saying goodbye,
    /// as when the kernel closes a killed process's sockets), or its own
    /// process gets SIGKILL, and its task — stream, connection,
    /// keep-alives — is gone.
    fn drop(&mut self) {
        self.socket.shut_down();
        self.task.abort();
    }
}

/// What dies with a candidate: its own TCP connection (redlockd, etcd: the
/// client is a task here), shut down at its kill, or its own process
/// (ZooKeeper: a JVM), killed with SIGKILL.
#[derive(Clone, Default)]
pub struct Socket(Arc<Slot>);

#[derive(Default)]
struct Slot {
    stream: Mutex<Option<std::net::TcpStream>>,
    process: Mutex<Option<tokio::process::Child>>,
    killed: AtomicBool,
}

impl Socket {
    fn shut_down(&self) {
        self.0.killed.store(true, Ordering::Relaxed);
        if let Some(socket) = lock(&self.0.stream).take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
        // kill(2) now; tokio reaps the child once it is dropped.
        if let Some(mut process) = lock(&self.0.process).take() {
            let _ = process.start_kill();
        }
    }

    fn killed(&self) -> bool {
        self.0.killed.load(Ordering::Relaxed)
    }

    /// Keeps the client's own process, to be killed at the candidate's
    /// kill (at once, if that came first).
    ///
    /// # Errors
    ///
    /// The candidate was killed before its process was started.
    pub fn process(&self, mut child: tokio::process::Child) -> anyhow::Result<()> {
        let mut slot = lock(&self.0.process);
        if self.killed() {
            let _ = child.start_kill();
            anyhow::bail!("killed while it started");
        }
        *slot = Some(child);
        Ok(())
    }

    /// A channel on one connection to `endpoint` whose socket this keeps.
    pub async fn channel(&self, endpoint: &str) -> anyhow::Result<Channel> {
        let slot = self.0.clone();
        let connector = tower::service_fn(move |uri: Uri| {
            let slot = slot.clone();
            async move {
                let authority = uri.authority().ok_or_else(|| anyhow!("no host:port in {uri}"))?;
                let stream = tokio::net::TcpStream::connect(authority.as_str()).await?;
                stream.set_nodelay(true)?;
                let std = stream.into_std()?;
                *lock(&slot.stream) = Some(std.try_clone()?);
                anyhow::Ok(hyper_util::rt::TokioIo::new(tokio::net::TcpStream::from_std(std)?))
            }
        });
        Ok(Endpoint::from_shared(endpoint.to_owned())?
            .connect_with_connector(connector)
            .await?)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What a candidate's task is given: where to say it leads, and the
/// values to proclaim once it does.
pub struct Ballot {
    pub name: String,
    socket: Socket,
    elected: Option<oneshot::Sender<anyhow::Result<Elected>>>,
    pub proclaims: mpsc::UnboundedReceiver<Vec<u8>>,
}

impl Ballot {
    /// The word arrived now.
    pub fn elected(&mut self, term: u64) {
        let at = Instant::now();
        if let Some(tx) = self.elected.take() {
            let _ = tx.send(Ok(Elected { at, term }));
        }
    }

    /// The candidacy failed: before it led, the waiting side hears it;
    /// after, the progress log does, unless it failed for being killed.
    pub fn failed(&mut self, error: anyhow::Error) {
        match self.elected.take() {
            Some(tx) => {
                let _ = tx.send(Err(error));
            }
            None if self.socket.killed() => {}
            None => crate::say(format!("    {} while leading: {error:#}", self.name)),
        }
    }
}
