//! redlockd's HTTP/JSON routes (docs/http.md) as workloads (a) and (b) see
//! them: each cycle is `POST /v1/locks/{name}:acquire` then `:release`, JSON
//! bodies, on the daemon's one port. Over HTTP/1.1 keep-alive each client has
//! a connection of its own (HTTP/1.1 answers one request at a time on a
//! connection); over HTTP/2 (prior knowledge) the clients share
//! `--connections` connections, as the gRPC clients do.

use std::sync::Arc;

use anyhow::{Context, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::{http1, http2};
use hyper::{Method, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

use crate::drive::Locker;

/// The acquire body of (a) and (b): the lease TTL of the gRPC runs.
const ACQUIRE: &str = r#"{"ttl":"10s"}"#;
/// (c)'s: a wait in the daemon, as the gRPC runs ask.
const ACQUIRE_WAITING: &str = r#"{"ttl":"10s","wait":"10s"}"#;

/// One client's HTTP connection (HTTP/1.1), or a share of one (HTTP/2).
#[derive(Clone)]
pub enum HttpLocker {
    Http1(Arc<tokio::sync::Mutex<http1::SendRequest<Full<Bytes>>>>),
    Http2(http2::SendRequest<Full<Bytes>>),
}

/// `host:port` of a daemon address (`http://host:port`).
fn authority(addr: &str) -> &str {
    addr.trim_start_matches("http://").trim_end_matches('/')
}

impl HttpLocker {
    /// An HTTP/1.1 keep-alive connection to the daemon at `addr`.
    pub async fn http1(addr: &str) -> anyhow::Result<HttpLocker> {
        let stream = TcpStream::connect(authority(addr))
            .await
            .context("connecting over HTTP/1.1")?;
        stream.set_nodelay(true)?;
        let (send, connection) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(HttpLocker::Http1(Arc::new(tokio::sync::Mutex::new(send))))
    }

    /// An HTTP/2 connection (prior knowledge, no TLS) to the daemon at `addr`.
    pub async fn http2(addr: &str) -> anyhow::Result<HttpLocker> {
        let stream = TcpStream::connect(authority(addr))
            .await
            .context("connecting over HTTP/2")?;
        stream.set_nodelay(true)?;
        let (send, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(HttpLocker::Http2(send))
    }

    /// `POST path` with `body`; the reply's JSON, which must be a 200's.
    async fn post(&self, path: String, body: String) -> anyhow::Result<serde_json::Value> {
        let request = Request::builder()
            .method(Method::POST)
            .header("content-type", "application/json");
        let request = match self {
            HttpLocker::Http1(_) => request.uri(&path).header("host", "redlockd"),
            HttpLocker::Http2(_) => request.uri(format!("http://redlockd{path}")),
        }
        .body(Full::new(Bytes::from(body)))?;
        let response = match self {
            HttpLocker::Http1(send) => {
                let mut send = send.lock().await;
                send.ready().await?;
                send.send_request(request).await?
            }
            HttpLocker::Http2(send) => {
                let mut send = send.clone();
                send.ready().await?;
                send.send_request(request).await?
            }
        };
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        if status != 200 {
            bail!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&body));
        }
        Ok(serde_json::from_slice(&body)?)
    }

    async fn acquire(&self, name: String, body: &str) -> anyhow::Result<Option<(String, String)>> {
        let reply = self.post(format!("/v1/locks/{name}:acquire"), body.to_owned()).await?;
        if reply["acquired"] != true {
            return Ok(None);
        }
        let value = reply["lease"]["value"].as_str().context("a lease without a value")?;
        Ok(Some((name, value.to_owned())))
    }
}

impl Locker for HttpLocker {
    /// The name and the lease's value.
    type Held = (String, String);

    async fn once(&self, name: String) -> anyhow::Result<Option<(String, String)>> {
        self.acquire(name, ACQUIRE).await
    }

    async fn waiting(&self, name: String) -> anyhow::Result<Option<(String, String)>> {
        self.acquire(name, ACQUIRE_WAITING).await
    }

    async fn release(&self, (name, value): (String, String)) -> anyhow::Result<()> {
        let body = serde_json::json!({ "value": value }).to_string();
        self.post(format!("/v1/locks/{name}:release"), body).await?;
        Ok(())
    }
}

/// (a) and (b)'s clients over HTTP/1.1: a keep-alive connection each.
pub async fn http1_clients(addr: &str, clients: usize) -> anyhow::Result<Vec<HttpLocker>> {
    let mut lockers = Vec::with_capacity(clients);
    for _ in 0..clients {
        lockers.push(HttpLocker::http1(addr).await?);
    }
    Ok(lockers)
}

/// (a) and (b)'s clients over HTTP/2: sharing `connections` connections.
pub async fn http2_clients(addr: &str, connections: usize, clients: usize) -> anyhow::Result<Vec<HttpLocker>> {
    let mut shared = Vec::with_capacity(connections);
    for _ in 0..connections.max(1) {
        shared.push(HttpLocker::http2(addr).await?);
    }
    Ok((0..clients).map(|i| shared[i % shared.len()].clone()).collect())
}
