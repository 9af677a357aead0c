//! A Hold session's outbox (docs/design.md#sessions): replies in order, waking
//! the reader, extensions dropped for a reader behind, never an ending.

use futures::StreamExt;
use tokio::time::{Duration, timeout};

use super::*;
use crate::api::proto::HoldEvent;

fn reply(event: HoldEvent) -> Reply {
    Ok(HoldResponse {
        event: event.into(),
        ..HoldResponse::default()
    })
}

fn event(reply: Option<Reply>) -> HoldEvent {
    reply.expect("a reply").expect("not an error").event()
}

#[tokio::test]
async fn replies_arrive_in_order_and_the_stream_ends_after_the_last() {
    let (out, mut replies) = outbox();
    assert!(out.send(reply(HoldEvent::Acquired)));
    assert_eq!(out.push(reply(HoldEvent::Extended), Delivery::IfRoom), Ok(()));
    assert!(out.send(reply(HoldEvent::Released)));
    drop(out);
    assert_eq!(event(replies.next().await), HoldEvent::Acquired);
    assert_eq!(event(replies.next().await), HoldEvent::Extended);
    assert_eq!(event(replies.next().await), HoldEvent::Released);
    assert!(replies.next().await.is_none());
}

#[tokio::test]
async fn a_waiting_reader_is_woken_by_a_send() {
    let (out, mut replies) = outbox();
    let reader = tokio::spawn(async move { replies.next().await });
    tokio::task::yield_now().await;
    assert!(out.send(reply(HoldEvent::Acquired)));
    let got = timeout(Duration::from_secs(5), reader)
        .await
        .expect("woken")
        .expect("joined");
    assert_eq!(event(got), HoldEvent::Acquired);
}

#[tokio::test]
async fn an_extension_is_dropped_when_the_reader_is_behind_but_an_ending_is_not() {
    let (out, mut replies) = outbox();
    for _ in 0..ROOM {
        assert_eq!(out.push(reply(HoldEvent::Extended), Delivery::IfRoom), Ok(()));
    }
    assert_eq!(
        out.push(reply(HoldEvent::Extended), Delivery::IfRoom),
        Err(Refused::Full)
    );
    assert!(out.send(reply(HoldEvent::Lost)));
    drop(out);
    let mut events = Vec::new();
    while let Some(reply) = replies.next().await {
        events.push(reply.expect("not an error").event());
    }
    assert_eq!(events.len(), ROOM + 1);
    assert_eq!(events.last(), Some(&HoldEvent::Lost));
}

#[tokio::test]
async fn the_last_reply_drops_the_extensions_still_waiting_but_nothing_else() {
    let (out, mut replies) = outbox();
    assert!(out.send(reply(HoldEvent::Acquired)));
    for _ in 0..3 {
        assert_eq!(out.push(reply(HoldEvent::Extended), Delivery::IfRoom), Ok(()));
    }
    assert!(out.push(reply(HoldEvent::Lost), Delivery::Last).is_ok());
    drop(out);
    assert_eq!(event(replies.next().await), HoldEvent::Acquired);
    assert_eq!(event(replies.next().await), HoldEvent::Lost);
    assert!(replies.next().await.is_none());
}

#[tokio::test]
async fn a_dropped_stream_wakes_the_session_and_refuses_what_it_sends() {
    let (out, replies) = outbox();
    assert!(!out.is_closed());
    let watching = tokio::spawn(out.closed_owned());
    tokio::task::yield_now().await;
    drop(replies);
    timeout(Duration::from_secs(5), watching)
        .await
        .expect("woken")
        .expect("joined");
    assert!(out.is_closed());
    assert!(!out.send(reply(HoldEvent::Released)));
    assert_eq!(
        out.push(reply(HoldEvent::Extended), Delivery::IfRoom),
        Err(Refused::Closed)
    );
}
