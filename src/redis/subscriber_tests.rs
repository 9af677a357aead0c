//! Release notices (docs/design.md#waiting): a burst that overruns the buffer
//! is told as missed, later releases still arrive.

use std::time::Duration;

use fred::types::config::Server;
use fred::types::{MessageKind, Value};

use super::*;

fn message(key: &str) -> Message {
    Message {
        channel: "redlockd:released".into(),
        value: Value::from(key),
        kind: MessageKind::Message,
        server: Server::new("127.0.0.1", 6379),
    }
}

#[tokio::test]
async fn a_burst_that_overruns_the_buffer_is_told_as_missed_and_later_releases_still_arrive() {
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel::<Option<String>>();
    let on_release: OnRelease = Arc::new(move |h: Heard<'_>| {
        let _ = heard_tx.send(match h {
            Heard::Released(name) => Some(name.to_owned()),
            Heard::Missed => None,
        });
    });
    let (tx, rx) = broadcast::channel(4);
    // Lagged before the loop reads anything: "lock:hot" was among them.
    for i in 0..10 {
        tx.send(message(&buckets::key("redlockd", &format!("lock:noise-{i}"))))
            .unwrap();
    }
    tx.send(message(&buckets::key("redlockd", "lock:hot"))).unwrap();
    let forwarding = tokio::spawn(forward(rx, "redlockd:".into(), on_release));
    let within = Duration::from_secs(5);
    let first = tokio::time::timeout(within, heard.recv()).await.unwrap().unwrap();
    assert_eq!(first, None, "the lag was not told as missed releases");
    // The buffer's newest messages are read after the lag.
    let mut names = Vec::new();
    while let Ok(Some(Some(name))) = tokio::time::timeout(Duration::from_millis(200), heard.recv()).await {
        names.push(name);
    }
    assert!(names.contains(&"lock:hot".to_owned()), "{names:?}");
    // And the loop goes on after the lag.
    tx.send(message(&buckets::key("redlockd", "lock:cold"))).unwrap();
    let later = tokio::time::timeout(within, heard.recv()).await.unwrap().unwrap();
    assert_eq!(later.as_deref(), Some("lock:cold"));
    drop(tx);
    forwarding.await.unwrap();
}
