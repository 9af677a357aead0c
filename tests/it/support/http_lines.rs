//! A plain HTTP client for the stream routes (docs/http.md#streams): one
//! hyper connection, HTTP/1.1 or HTTP/2 (prior knowledge, with a window
//! of the test's choosing), and a response read line by line or event by
//! event. Closing the connection is what a client that leaves does.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::task::JoinHandle;

/// Which HTTP the connection speaks.
#[derive(Debug, Clone, Copy)]
pub enum Protocol {
    Http1,
    /// HTTP/2 without TLS, its stream window `window` bytes: the daemon
    /// sends no more than that before the client reads.
    Http2 {
        window: u32,
    },
}

enum Sender {
    Http1(http1::SendRequest<Full<Bytes>>),
    Http2(http2::SendRequest<Full<Bytes>>),
}

/// One connection to the daemon.
pub struct Connection {
    addr: SocketAddr,
    sender: Sender,
    driver: JoinHandle<()>,
    /// Sent as `Authorization: Bearer <token>`.
    token: Option<String>,
}

impl Connection {
    pub async fn open(addr: SocketAddr, protocol: Protocol) -> Connection {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connecting to the daemon");
        let io = TokioIo::new(tcp);
        let (sender, driver) = match protocol {
            Protocol::Http1 => {
                let (sender, connection) = http1::handshake(io).await.expect("an HTTP/1.1 connection");
                (
                    Sender::Http1(sender),
                    tokio::spawn(async move { drop(connection.await) }),
                )
            }
            Protocol::Http2 { window } => {
                let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                    .initial_stream_window_size(window)
                    .initial_connection_window_size(window.max(65_535))
                    .handshake(io)
                    .await
                    .expect("an HTTP/2 connection");
                (
                    Sender::Http2(sender),
                    tokio::spawn(async move { drop(connection.await) }),
                )
            }
        };
        Connection {
            addr,
            sender,
            driver,
            token: None,
        }
    }

    /// Sends `Authorization: Bearer <token>` from now on.
    #[must_use]
    pub fn with_token(mut self, token: &str) -> Connection {
        self.token = Some(token.to_owned());
        self
    }

    /// Sends `method path` with `body` (JSON; none when empty), accepting
    /// `accept`; the response's head, and its body to read.
    pub async fn send(&mut self, method: &str, path: &str, body: &str, accept: Option<&str>) -> Lines {
        let mut request = hyper::Request::builder().method(method);
        request = match self.sender {
            Sender::Http1(_) => request.uri(path).header("host", self.addr.to_string()),
            Sender::Http2(_) => request.uri(format!("http://{}{path}", self.addr)),
        };
        if !body.is_empty() {
            request = request.header("content-type", "application/json");
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
        let response = match &mut self.sender {
            Sender::Http1(sender) => {
                sender.ready().await.expect("the connection takes a request");
                sender.send_request(request).await
            }
            Sender::Http2(sender) => {
                sender.ready().await.expect("the connection takes a request");
                sender.send_request(request).await
            }
        }
        .expect("a response");
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        Lines {
            status: response.status().as_u16(),
            content_type,
            body: response.into_body(),
            buffer: Vec::new(),
            ended: false,
        }
    }

    /// Closes the connection, as a client that leaves (or dies).
    pub fn close(&self) {
        self.driver.abort();
    }
}

/// A response's body, line by line.
pub struct Lines {
    pub status: u16,
    pub content_type: String,
    body: Incoming,
    buffer: Vec<u8>,
    ended: bool,
}

impl Lines {
    /// The next line without its `\n`; `None` once the body ended (or broke).
    pub async fn next_line(&mut self) -> Option<String> {
        loop {
            if let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=at).collect();
                return Some(String::from_utf8_lossy(&line[..at]).into_owned());
            }
            if self.ended {
                // A last line without its `\n` (an error's JSON body).
                return (!self.buffer.is_empty())
                    .then(|| String::from_utf8_lossy(&std::mem::take(&mut self.buffer)).into_owned());
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
                Some(Err(_)) | None => self.ended = true,
            }
        }
    }

    /// `next_line`, panicking when none comes within `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<String> {
        tokio::time::timeout(wait, self.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line within {wait:?}"))
    }

    /// The next Server-Sent Event (comments skipped): its `event` and its
    /// `data` as JSON. Panics after 10 s or at the end of the body.
    pub async fn next_event(&mut self) -> (String, Value) {
        let (mut kind, mut data) = (String::new(), String::new());
        loop {
            let line = self.next_within(Duration::from_secs(10)).await.expect("an event");
            if line.is_empty() {
                if data.is_empty() {
                    continue;
                }
                let json = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{data:?}: {e}"));
                return (kind, json);
            }
            if let Some(k) = line.strip_prefix("event: ") {
                k.clone_into(&mut kind);
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            } else {
                assert!(line.starts_with(':'), "not an event's line: {line:?}");
            }
        }
    }

    /// Panics, showing the body, unless the status is `want`.
    pub async fn expect_status(&mut self, want: u16) {
        if self.status != want {
            let (status, body) = (self.status, self.rest().await);
            panic!("status {status}, not {want}: {body}");
        }
    }

    /// The rest of the body, as text (within 10 s).
    pub async fn rest(&mut self) -> String {
        let mut text = String::new();
        while let Some(line) = self.next_within(Duration::from_secs(10)).await {
            text.push_str(&line);
            text.push('\n');
        }
        text
    }
}

/// The next line of `lines`, which must be a `{"result":…}`: the message.
/// Panics after 10 s.
pub async fn next_result(lines: &mut Lines) -> Value {
    let line = lines.next_within(Duration::from_secs(10)).await.expect("a line");
    let json: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    json.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("not a result: {line}"))
}

/// A proto3 JSON duration ("0.9s").
pub fn seconds(duration: &Value) -> Duration {
    let text = duration
        .as_str()
        .unwrap_or_else(|| panic!("not a duration: {duration}"));
    Duration::from_secs_f64(
        text.trim_end_matches('s')
            .parse()
            .unwrap_or_else(|e| panic!("{text}: {e}")),
    )
}
