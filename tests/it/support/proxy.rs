//! Fault-injecting TCP proxy for integration tests: put one between a daemon and one Redis master to delay, drop,
//! black-hole or reset that link while both ends keep running.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::{Instant, sleep, sleep_until};

/// What the proxy does to the bytes of every connection, existing and new.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Forward both ways.
    Pass,
    /// Forward each chunk `base + uniform(0..=jitter)` after it was read. Per direction the order is preserved, and
    /// the delay is not cumulative: pipelined chunks each wait about the delay, not the sum.
    Delay { base: Duration, jitter: Duration },
    /// Forward each request chunk that holds `needle` `delay` after it was read, and everything else at once: one
    /// kind of command slowed (say, the scripts whose keys name `needle`), the rest not. Per direction the order is
    /// preserved, so what follows a slowed chunk on its connection waits for it.
    DelayRequestsWith { needle: &'static str, delay: Duration },
    /// Requests still reach Redis (which executes them), but the first reply is discarded and the client connection
    /// is cut: kept open, later replies would pair with the wrong requests.
    DropReplies,
    /// Nothing is forwarded either way; connections stay open but silent, new ones are accepted. Bytes are held,
    /// not lost, like a partition that heals before TCP gives up: they flow once the mode changes (losing some would
    /// pair later replies with the wrong requests). A new connection dials Redis only when the path is up.
    Blackhole,
    /// Every client connection is closed at once with an RST; new connections are accepted and reset immediately.
    Reset,
}

/// A proxy in front of one upstream. Stops on drop: the listener and every connection are closed.
pub struct Proxy {
    addr: SocketAddr,
    mode: watch::Sender<Mode>,
    upstream: watch::Sender<SocketAddr>,
    open: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on `127.0.0.1:0` and forwards every connection to `upstream`, in `Mode::Pass`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let (mode, watching) = watch::channel(Mode::Pass);
        let (upstream, target) = watch::channel(upstream);
        let open = Arc::new(AtomicUsize::new(0));
        let accept = tokio::spawn(accept_loop(listener, target, watching, open.clone()));
        Proxy {
            addr,
            mode,
            upstream,
            open,
            accept,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://127.0.0.1:<port>`, to hand to the daemon in place of the master's URL.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Applies to existing and new connections from now on (even to chunks already waiting out a delay).
    pub fn set_mode(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    /// Points new connections at another server (a failover: the same address now leads to a promoted replica).
    /// Existing connections keep their server; `set_mode(Mode::Reset)` then `Pass` moves them too.
    pub fn set_upstream(&self, upstream: SocketAddr) {
        self.upstream.send_replace(upstream);
    }

    pub fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    /// Client connections currently open (accepted and not yet closed).
    pub fn connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // The accept task owns the listener and the JoinSet of connection tasks; aborting it drops both, which
        // aborts every connection task and so closes its sockets. (Abort takes effect at the runtime's next turn.)
        self.accept.abort();
    }
}

/// Counts an open client connection for as long as it lives, also when its task is aborted.
struct Open(Arc<AtomicUsize>);

impl Open {
    fn new(count: &Arc<AtomicUsize>) -> Open {
        count.fetch_add(1, Ordering::SeqCst);
        Open(count.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn accept_loop(
    listener: TcpListener,
    upstream: watch::Receiver<SocketAddr>,
    mode: watch::Receiver<Mode>,
    open: Arc<AtomicUsize>,
) {
    // Owned here so that aborting this task also aborts every connection (a JoinSet aborts its tasks on drop).
    let mut connections = JoinSet::new();
    loop {
        match listener.accept().await {
            Ok((client, _)) => {
                let counted = Open::new(&open);
                let target = *upstream.borrow();
                connections.spawn(serve(client, target, mode.clone(), counted));
            }
            // E.g. out of file descriptors: back off instead of spinning.
            Err(_) => sleep(Duration::from_millis(10)).await,
        }
        // Forget finished connections so the set does not grow without bound.
        while connections.try_join_next().is_some() {}
    }
}

/// One client connection, from accept to close.
async fn serve(mut client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>, _counted: Open) {
    // Like SYNs during a partition, the upstream is dialled only once the path is up; meanwhile the client's
    // bytes wait in its socket.
    let Ok(now) = mode.wait_for(|m| *m != Mode::Blackhole).await.map(|m| *m) else {
        return; // the proxy is gone
    };
    if now == Mode::Reset {
        let _ = client.set_zero_linger(); // dropping it now sends an RST
        return;
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return; // upstream down: the client sees its connection closed
    };
    // Chunks are small RESP commands: do not let Nagle add its own delay on top of ours.
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);

    let reset = {
        let (client_read, client_write) = client.split();
        let (server_read, server_write) = server.split();
        let requests = pump(client_read, server_write, Way::Request, mode.clone());
        let replies = pump(server_read, client_write, Way::Reply, mode.clone());
        tokio::select! {
            // Both directions saw EOF, or one was cut (I/O error, dropped reply): close both sockets.
            _ = async { tokio::try_join!(requests, replies) } => false,
            // Reset must close the connection even while a pump is blocked on a read, a delay or a blackhole.
            changed = mode.wait_for(|m| *m == Mode::Reset) => changed.is_ok(),
        }
    };
    if reset {
        let _ = client.set_zero_linger();
    }
    // Dropping `client` and `server` closes them (RST for the client on reset, FIN otherwise).
}

/// Which way a pump carries bytes: `DropReplies` only discards server-to-client bytes.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    Request,
    Reply,
}

/// The connection must be closed: an I/O error, a dropped reply, or the proxy is gone.
struct Cut;

/// Forwards one direction. The reader keeps reading and stamping chunks while the writer waits out each chunk's
/// delay: that makes the delay non-cumulative, and one sequential writer fed by a FIFO queue keeps the order
/// (a chunk is written at max(its deadline, the previous write)).
async fn pump<R, W>(src: R, dst: W, way: Way, mode: watch::Receiver<Mode>) -> Result<(), Cut>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (queue, queued) = mpsc::unbounded_channel();
    tokio::try_join!(read_side(src, queue), write_side(queued, dst, way, mode)).map(|_| ())
}

async fn read_side<R: AsyncRead + Unpin>(
    mut src: R,
    queue: mpsc::UnboundedSender<(Instant, Vec<u8>)>,
) -> Result<(), Cut> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = src.read(&mut buf).await.map_err(|_| Cut)?;
        if n == 0 {
            return Ok(()); // EOF: dropping `queue` tells the writer to forward it after the queued chunks
        }
        queue.send((Instant::now(), buf[..n].to_vec())).map_err(|_| Cut)?;
    }
}

async fn write_side<W: AsyncWrite + Unpin>(
    mut queued: mpsc::UnboundedReceiver<(Instant, Vec<u8>)>,
    mut dst: W,
    way: Way,
    mut mode: watch::Receiver<Mode>,
) -> Result<(), Cut> {
    while let Some((read_at, chunk)) = queued.recv().await {
        // Drawn once per chunk, so re-evaluating after a mode change does not re-roll the jitter.
        let draw = fastrand::f64();
        // Re-evaluated on every mode change, so a new mode applies to a chunk already waiting.
        loop {
            let deadline = match *mode.borrow_and_update() {
                Mode::Pass => break,
                Mode::Delay { base, jitter } => read_at + base + jitter.mul_f64(draw),
                Mode::DelayRequestsWith { needle, delay } if way == Way::Request && holds(&chunk, needle) => {
                    read_at + delay
                }
                Mode::DelayRequestsWith { .. } => break,
                Mode::DropReplies if way == Way::Reply => return Err(Cut),
                Mode::DropReplies => break,
                // Far enough to mean "until the mode changes"; Reset is acted on by `serve`, which drops us.
                Mode::Blackhole | Mode::Reset => Instant::now() + Duration::from_secs(86_400),
            };
            tokio::select! {
                () = sleep_until(deadline) => break,
                changed = mode.changed() => changed.map_err(|_| Cut)?,
            }
        }
        dst.write_all(&chunk).await.map_err(|_| Cut)?;
    }
    // The source reached EOF: pass the half-close on.
    dst.shutdown().await.map_err(|_| Cut)
}

/// Whether `chunk` holds the bytes of `needle`.
fn holds(chunk: &[u8], needle: &str) -> bool {
    chunk.windows(needle.len()).any(|w| w == needle.as_bytes())
}
