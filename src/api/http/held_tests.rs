//! A held lock's stream over HTTP: an extension a reader falls behind on ends
//! the session with lost (docs/http.md).

use futures::StreamExt;

use super::*;

fn extended() -> Reply {
    Ok(HoldResponse {
        event: HoldEvent::Extended.into(),
        ..HoldResponse::default()
    })
}

#[tokio::test]
async fn an_extension_for_a_reader_room_events_behind_ends_the_session_with_lost() {
    let (out, replies) = outbox::<HoldResponse>();
    let unread = Unread::new(out);
    for _ in 0..ROOM {
        assert_eq!(unread.out.push(extended(), Delivery::IfRoom), Ok(()));
    }
    assert!(!unread.is_closed());
    let lease = crate::redlock::Lease {
        resource: "r".into(),
        value: crate::redlock::LockValue::random(),
        fencing_token: 7,
        validity: std::time::Duration::from_secs(1),
    };
    let told = Event::Extended {
        lease: &lease,
        validity: std::time::Duration::from_secs(1),
    };
    assert_eq!(unread.tell("r", told, Delivery::IfRoom), Err(Refused::Closed));
    assert!(unread.is_closed());
    drop(unread);
    let events: Vec<HoldEvent> = replies.map(|reply| reply.expect("no error").event()).collect().await;
    assert_eq!(
        events,
        [HoldEvent::Lost],
        "the waiting extensions are dropped, LOST is the last word"
    );
}
