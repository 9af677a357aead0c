//! The fault-injecting proxy of tests/it/support/proxy.rs, against a real `redis-server`, spoken to in raw RESP.

use crate::support;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use fred::prelude::{Client, ClientLike, Config as FredConfig, KeysInterface};
use support::Cluster;
use support::proxy::{Mode, Proxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep, timeout_at};

/// How long anything that should happen may take on a loaded machine; only waited out when a test fails.
const PATIENCE: Duration = Duration::from_secs(5);

fn upstream(cluster: &Cluster) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, cluster.masters[0].port()))
}

async fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).await.expect("connecting");
    stream.set_nodelay(true).unwrap();
    stream
}

/// Reads until `n` bytes came or `limit` passed, and returns what came. (`read` is cancel-safe, unlike
/// `read_exact`, so nothing is lost on timeout.) Panics if the connection closes.
async fn read_for(conn: &mut TcpStream, n: usize, limit: Duration) -> Vec<u8> {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < n {
        let want = (n - got.len()).min(buf.len());
        match timeout_at(deadline, conn.read(&mut buf[..want])).await {
            Err(_) => break,
            Ok(Ok(0)) => panic!("connection closed after {:?}", String::from_utf8_lossy(&got)),
            Ok(Ok(k)) => got.extend_from_slice(&buf[..k]),
            Ok(Err(e)) => panic!("read failed: {e}"),
        }
    }
    got
}

/// Sends `request` and expects exactly `reply`.
async fn ask(conn: &mut TcpStream, request: &[u8], reply: &[u8]) {
    conn.write_all(request).await.unwrap();
    let got = read_for(conn, reply.len(), PATIENCE).await;
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(reply));
}

/// Reads until the peer closes the connection: the bytes that came first, and how it ended (Ok for a FIN, the
/// error for an RST). Panics if it is still open after `PATIENCE`.
async fn until_closed(conn: &mut TcpStream) -> (Vec<u8>, io::Result<()>) {
    let deadline = Instant::now() + PATIENCE;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match timeout_at(deadline, conn.read(&mut buf)).await {
            Err(_) => panic!("connection still open, after {:?}", String::from_utf8_lossy(&got)),
            Ok(Ok(0)) => return (got, Ok(())),
            Ok(Ok(k)) => got.extend_from_slice(&buf[..k]),
            Ok(Err(e)) => return (got, Err(e)),
        }
    }
}

/// Whether the connection stays open and says nothing for `quiet`.
async fn is_silent(conn: &mut TcpStream, quiet: Duration) -> bool {
    let mut buf = [0u8; 64];
    timeout_at(Instant::now() + quiet, conn.read(&mut buf)).await.is_err()
}

async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        sleep(Duration::from_millis(10)).await;
    }
}

/// A plain client straight to the master, bypassing the proxy.
async fn direct_get(cluster: &Cluster, key: &str) -> Option<String> {
    let admin = cluster.admin(0).await;
    let value: Option<String> = admin.get(key).await.unwrap();
    let _ = admin.quit().await;
    value
}

/// `:1\r\n:2\r\n…:n\r\n`, the replies to n `INCR`s or `RPUSH`es of one key.
fn counted_replies(n: usize) -> String {
    (1..=n).map(|i| format!(":{i}\r\n")).collect()
}

#[tokio::test]
async fn pass_forwards_requests_to_the_real_redis_and_its_replies_back() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    assert_eq!(proxy.mode(), Mode::Pass);
    assert_eq!(proxy.url(), format!("redis://127.0.0.1:{}", proxy.addr().port()));

    let mut conn = connect(proxy.addr()).await;
    ask(&mut conn, b"PING\r\n", b"+PONG\r\n").await;
    ask(&mut conn, b"SET through proxy\r\n", b"+OK\r\n").await;
    assert_eq!(direct_get(&cluster, "through").await.as_deref(), Some("proxy"));

    // A real client, given the proxy's URL in place of the master's.
    let client = Client::new(FredConfig::from_url(&proxy.url()).unwrap(), None, None, None);
    client.init().await.expect("connecting through the proxy");
    let value: Option<String> = client.get("through").await.unwrap();
    assert_eq!(value.as_deref(), Some("proxy"));
    let _ = client.quit().await;
}

#[tokio::test]
async fn delay_with_jitter_keeps_each_direction_in_order() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    proxy.set_mode(Mode::Delay {
        base: Duration::from_millis(1),
        jitter: Duration::from_millis(40),
    });
    assert!(matches!(proxy.mode(), Mode::Delay { .. }));
    let mut conn = connect(proxy.addr()).await;

    // Separate writes become separate chunks, each with its own jitter: forwarded one by one, they would overtake
    // each other both on the way to Redis (the list order) and back (the reply order).
    for i in 1..=50 {
        conn.write_all(format!("RPUSH order {i}\r\n").as_bytes()).await.unwrap();
        sleep(Duration::from_millis(2)).await;
    }
    let replies = counted_replies(50);
    assert_eq!(
        String::from_utf8_lossy(&read_for(&mut conn, replies.len(), PATIENCE).await),
        replies
    );
    let mut admin = connect(upstream(&cluster)).await;
    let list: String = (1..=50)
        .map(|i| format!("${}\r\n{i}\r\n", i.to_string().len()))
        .collect();
    ask(
        &mut admin,
        b"LRANGE order 0 -1\r\n",
        format!("*50\r\n{list}").as_bytes(),
    )
    .await;

    // And 50 pipelined commands in one write.
    ask(&mut conn, "INCR n\r\n".repeat(50).as_bytes(), replies.as_bytes()).await;
}

#[tokio::test]
async fn delay_makes_a_shorter_timeout_expire_without_adding_up_and_pass_answers_at_once() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    let base = Duration::from_millis(500);
    proxy.set_mode(Mode::Delay {
        base,
        jitter: Duration::ZERO,
    });
    let mut conn = connect(proxy.addr()).await;

    // Each way is delayed by `base`: a client waiting less than that gets nothing, and the reply comes later.
    let sent = Instant::now();
    conn.write_all(b"PING\r\n").await.unwrap();
    assert!(read_for(&mut conn, 7, Duration::from_millis(400)).await.is_empty());
    assert_eq!(read_for(&mut conn, 7, PATIENCE).await, b"+PONG\r\n");
    assert!(sent.elapsed() >= 2 * base, "answered after {:?}", sent.elapsed());

    // Ten pings in separate writes 20 ms apart each wait about the delay, not the sum: all ten are back in about
    // 0.2 s + 2 × 0.5 s, where a delay that added up would take more than 10 × 0.5 s.
    let sent = Instant::now();
    for _ in 0..10 {
        conn.write_all(b"PING\r\n").await.unwrap();
        sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(read_for(&mut conn, 70, PATIENCE).await, b"+PONG\r\n".repeat(10));
    assert!(sent.elapsed() < Duration::from_secs(4), "took {:?}", sent.elapsed());

    // Pass applies to the existing connection and to new ones: both answer well within the delay.
    proxy.set_mode(Mode::Pass);
    conn.write_all(b"PING\r\n").await.unwrap();
    assert_eq!(read_for(&mut conn, 7, Duration::from_millis(400)).await, b"+PONG\r\n");
    let mut fresh = connect(proxy.addr()).await;
    fresh.write_all(b"PING\r\n").await.unwrap();
    assert_eq!(read_for(&mut fresh, 7, Duration::from_millis(400)).await, b"+PONG\r\n");
}

#[tokio::test]
async fn drop_replies_lets_redis_execute_the_command_but_cuts_the_client_without_a_reply() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    let mut existing = connect(proxy.addr()).await;
    ask(&mut existing, b"PING\r\n", b"+PONG\r\n").await;

    proxy.set_mode(Mode::DropReplies);
    existing.write_all(b"SET existing landed\r\n").await.unwrap();
    let (reply, _) = until_closed(&mut existing).await;
    assert!(reply.is_empty(), "got a reply: {:?}", String::from_utf8_lossy(&reply));
    assert_eq!(direct_get(&cluster, "existing").await.as_deref(), Some("landed"));

    let mut fresh = connect(proxy.addr()).await;
    fresh.write_all(b"SET fresh landed\r\n").await.unwrap();
    let (reply, _) = until_closed(&mut fresh).await;
    assert!(reply.is_empty(), "got a reply: {:?}", String::from_utf8_lossy(&reply));
    assert_eq!(direct_get(&cluster, "fresh").await.as_deref(), Some("landed"));
    eventually("both connections counted closed", || proxy.connections() == 0).await;
}

#[tokio::test]
async fn blackhole_holds_everything_silently_and_pass_lets_old_and_new_connections_through() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    let mut existing = connect(proxy.addr()).await;
    ask(&mut existing, b"PING\r\n", b"+PONG\r\n").await;

    proxy.set_mode(Mode::Blackhole);
    existing.write_all(b"SET held 1\r\n").await.unwrap();
    let mut during = connect(proxy.addr()).await; // still accepted
    during.write_all(b"PING\r\n").await.unwrap();
    assert!(is_silent(&mut existing, Duration::from_millis(300)).await);
    assert!(is_silent(&mut during, Duration::from_millis(300)).await);
    assert_eq!(
        direct_get(&cluster, "held").await,
        None,
        "a request went through the blackhole"
    );
    eventually("both connections counted open", || proxy.connections() == 2).await;

    proxy.set_mode(Mode::Pass);
    let mut after = connect(proxy.addr()).await;
    ask(&mut after, b"PING\r\n", b"+PONG\r\n").await;
    // What was held is delivered late, in order, as after a healed partition.
    assert_eq!(read_for(&mut existing, 5, PATIENCE).await, b"+OK\r\n");
    assert_eq!(read_for(&mut during, 7, PATIENCE).await, b"+PONG\r\n");
    assert_eq!(direct_get(&cluster, "held").await.as_deref(), Some("1"));
}

#[tokio::test]
async fn reset_closes_current_connections_with_an_rst_and_resets_new_ones() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    let mut existing = connect(proxy.addr()).await;
    ask(&mut existing, b"PING\r\n", b"+PONG\r\n").await;

    proxy.set_mode(Mode::Reset);
    let (reply, end) = until_closed(&mut existing).await;
    assert!(reply.is_empty());
    assert_eq!(
        end.expect_err("a FIN, not an RST").kind(),
        io::ErrorKind::ConnectionReset
    );

    let mut fresh = connect(proxy.addr()).await; // accepted, then reset
    let (reply, end) = until_closed(&mut fresh).await;
    assert!(reply.is_empty());
    assert_eq!(
        end.expect_err("a FIN, not an RST").kind(),
        io::ErrorKind::ConnectionReset
    );
    eventually("no connection counted open", || proxy.connections() == 0).await;

    proxy.set_mode(Mode::Pass);
    let mut after = connect(proxy.addr()).await;
    ask(&mut after, b"PING\r\n", b"+PONG\r\n").await;
}

#[tokio::test]
async fn connections_counts_client_connections_until_they_close() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    assert_eq!(proxy.connections(), 0);
    let mut one = connect(proxy.addr()).await;
    let mut two = connect(proxy.addr()).await;
    ask(&mut one, b"PING\r\n", b"+PONG\r\n").await;
    ask(&mut two, b"PING\r\n", b"+PONG\r\n").await;
    assert_eq!(proxy.connections(), 2);

    // The client's FIN is passed on to Redis, which closes its side, which is passed back.
    one.shutdown().await.unwrap();
    let (rest, end) = until_closed(&mut one).await;
    assert!(rest.is_empty() && end.is_ok(), "{rest:?} {end:?}");
    eventually("one connection counted open", || proxy.connections() == 1).await;
    drop(two);
    eventually("no connection counted open", || proxy.connections() == 0).await;
}

#[tokio::test]
async fn dropping_the_proxy_closes_its_listener_and_its_connections() {
    let cluster = Cluster::start(1);
    let proxy = Proxy::start(upstream(&cluster)).await;
    let addr = proxy.addr();
    let mut conn = connect(addr).await;
    ask(&mut conn, b"PING\r\n", b"+PONG\r\n").await;

    drop(proxy);
    let (rest, _) = until_closed(&mut conn).await;
    assert!(rest.is_empty());
    // The abort takes effect at the runtime's next turn: until then a connect may still be accepted.
    let deadline = Instant::now() + PATIENCE;
    loop {
        match TcpStream::connect(addr).await {
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => break,
            other => assert!(Instant::now() < deadline, "still listening: {other:?}"),
        }
        sleep(Duration::from_millis(10)).await;
    }
}
