//! A small HTTP client for the HTTP/JSON routes' tests: hyper's own
//! HTTP/1.1 and HTTP/2 client connections over a plain TCP stream (or raw
//! bytes, for what a well-behaved client never sends).

use std::net::SocketAddr;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A reply: its status, headers and body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (panics, showing it, when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `google.rpc.Status` message of an error reply.
    pub fn message(&self) -> String {
        self.json()["message"].as_str().unwrap_or_default().to_owned()
    }
}

/// Which HTTP version a `Client` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http1,
    Http2,
}

/// One keep-alive connection to the daemon.
pub struct Client {
    send: Sender,
    token: Option<String>,
}

enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Client {
    /// An HTTP/1.1 connection to `addr`.
    pub async fn connect(addr: SocketAddr) -> Client {
        Client::connect_with(addr, Version::Http1).await
    }

    /// A connection speaking `version` (HTTP/2 with prior knowledge).
    pub async fn connect_with(addr: SocketAddr, version: Version) -> Client {
        let io = TokioIo::new(TcpStream::connect(addr).await.expect("connecting over HTTP"));
        let send = match version {
            Version::Http1 => {
                let (send, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
                tokio::spawn(conn);
                Sender::Http1(send)
            }
            Version::Http2 => {
                let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                    .await
                    .unwrap();
                tokio::spawn(conn);
                Sender::Http2(send)
            }
        };
        Client { send, token: None }
    }

    /// Sends `Authorization: Bearer <token>` from now on.
    #[must_use]
    pub fn with_token(mut self, token: &str) -> Client {
        self.token = Some(token.to_owned());
        self
    }

    /// `POST path` with a JSON body.
    pub async fn post(&mut self, path: &str, body: &str) -> Reply {
        self.send(Method::POST, path, &[("content-type", "application/json")], body)
            .await
    }

    /// `GET path`.
    pub async fn get(&mut self, path: &str) -> Reply {
        self.send(Method::GET, path, &[], "").await
    }

    /// Any request.
    pub async fn send(&mut self, method: Method, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut request = Request::builder().method(method).uri(path);
        if let Sender::Http1(_) = self.send {
            request = request.header("host", "localhost");
        } else {
            request = request.uri(format!("http://localhost{path}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
        let exchange = async {
            let response = match &mut self.send {
                Sender::Http1(send) => send.send_request(request).await,
                Sender::Http2(send) => send.send_request(request).await,
            }
            .expect("an HTTP reply");
            let (parts, body) = response.into_parts();
            Reply {
                status: parts.status,
                headers: parts.headers,
                body: body.collect().await.unwrap().to_bytes(),
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), exchange)
            .await
            .expect("an HTTP reply within 30 s")
    }
}

/// Sends `raw` bytes on a new connection and reads until the daemon
/// closes it (or 5 s pass): what a broken or old client sees.
pub async fn raw(addr: SocketAddr, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}
