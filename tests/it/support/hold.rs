//! `Hold` streams: a session opened and then read event by event, the first
//! message of one, and `Inspect` of a resource.

use std::time::Duration;

use redlockd_client::proto::hold_request::Request as Ask;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{
    HoldEvent, HoldRequest, HoldResponse, HoldStart, InspectRequest, InspectResponse, hold_request,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::transport::Channel;

use super::secs;

/// An open Hold session: send with `tx` (drop it to half-close), read `rx`.
pub struct Session {
    pub tx: Option<mpsc::Sender<HoldRequest>>,
    pub rx: Streaming<HoldResponse>,
}

/// Opens a session on `resource` (waiting up to 5 s), `max_hold` if given.
pub async fn hold(client: &mut LockClient<Channel>, resource: &str, ttl: f64, max_hold: Option<f64>) -> Session {
    let (tx, requests) = mpsc::channel(4);
    let start = HoldStart {
        resource: resource.into(),
        ttl: secs(ttl),
        wait: secs(5.0),
        owner: "session-test".into(),
        max_hold: max_hold.and_then(secs),
        ..Default::default()
    };
    tx.send(HoldRequest {
        request: Some(hold_request::Request::Start(start)),
    })
    .await
    .unwrap();
    let rx = client
        .hold(ReceiverStream::new(requests))
        .await
        .expect("hold")
        .into_inner();
    Session { tx: Some(tx), rx }
}

impl Session {
    pub async fn next(&mut self) -> HoldResponse {
        tokio::time::timeout(Duration::from_secs(15), self.rx.message())
            .await
            .expect("no session event within 15 s")
            .expect("stream error")
            .expect("stream ended")
    }

    pub async fn expect(&mut self, event: HoldEvent) -> HoldResponse {
        let message = self.next().await;
        assert_eq!(message.event(), event, "{message:?}");
        message
    }
}

pub async fn inspect(client: &mut LockClient<Channel>, resource: &str) -> InspectResponse {
    client
        .inspect(InspectRequest {
            resource: resource.into(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// The first message of a session on `resource` with a TTL of 2 s.
pub fn hold_start(resource: &str) -> HoldRequest {
    HoldRequest {
        request: Some(Ask::Start(HoldStart {
            resource: resource.into(),
            ttl: secs(2.0),
            ..HoldStart::default()
        })),
    }
}
