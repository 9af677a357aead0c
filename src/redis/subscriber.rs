//! Release notifications (docs/design.md#waiting): the unlock script publishes the lock
//! key on `<prefix>:released` on every master; each daemon subscribes on
//! every master and wakes the head of its local queue for that resource at
//! once, so a hand-off costs about one round trip, not a retry delay.
//! Duplicates (one per master) are harmless: a wake-up is idempotent.

use std::sync::Arc;

use fred::clients::SubscriberClient;
use fred::prelude::{ClientLike, EventInterface, PubsubInterface};
use fred::types::Message;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::connect::{RedisNodeConfig, builder};
use super::scripts::released_channel;
use crate::redlock::buckets;

/// What the subscriber heard on a master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Heard<'a> {
    /// Lock `name` (the key after `<prefix>:{<tag>}:`) was released.
    Released(&'a str),
    /// Some releases were missed (a burst overran the buffer): any lock
    /// may have been released.
    Missed,
}

/// Told what the subscriber hears, from its own task.
pub(crate) type OnRelease = Arc<dyn Fn(Heard<'_>) + Send + Sync>;

/// Wakes the head of the local queue of each released lock named on
/// `messages` (`<prefix>:{<tag>}:<lock name>`), until the client is gone.
async fn forward(mut messages: broadcast::Receiver<Message>, lock_prefix: String, on_release: OnRelease) {
    loop {
        match messages.recv().await {
            Ok(message) => {
                let key = message.value.as_string();
                let name = key.as_deref().and_then(buckets::split);
                if let Some((_, name)) = name.filter(|(start, _)| start.strip_prefix(&lock_prefix).is_some()) {
                    on_release(Heard::Released(name));
                }
            }
            // Some releases were missed: wake every head, as one of them may
            // be for its resource (a spurious wake-up costs one attempt).
            Err(RecvError::Lagged(_)) => on_release(Heard::Missed),
            Err(RecvError::Closed) => return,
        }
    }
}

/// Subscribes to master `config`'s release channel and forwards releases to
/// `waiters`; resubscribes after reconnects. Keep the client alive.
///
/// # Errors
/// When the URL cannot be parsed.
pub(crate) fn subscribe(config: &RedisNodeConfig, on_release: OnRelease) -> Result<SubscriberClient, String> {
    let (mut builder, name) = builder(config)?;
    // Room for a burst of releases (the default is 32); past it the loop
    // below wakes every head instead. fred gives each of a client's nine
    // event channels this many slots, all allocated at start: 1024 cost
    // ~2 MB of the idle daemon's memory (docs/performance.md, workload (d)).
    builder.with_performance_config(|p| p.broadcast_channel_capacity = 256);
    let client = builder.build_subscriber_client().map_err(|e| e.to_string())?;
    // The message is the lock key, `<prefix>:{<tag>}:<lock name>`.
    let lock_prefix = format!("{}:", config.key_prefix);
    // Our own loop, not fred's `on_message`: that one stops for good at the
    // first `Lagged` (a burst of releases overran the broadcast buffer), and
    // every wake-up after it would wait out a retry delay.
    tokio::spawn(forward(client.message_rx(), lock_prefix, on_release));
    // Detached: it resubscribes after every reconnect for the client's life.
    drop(client.manage_subscriptions());
    client.connect();
    let channel = released_channel(&config.key_prefix);
    let subscriber = client.clone();
    tokio::spawn(async move {
        // The first SUBSCRIBE, retried until it works (a master down at
        // start, an ACL without +subscribe); manage_subscriptions repeats it
        // after every reconnect.
        let mut delay = std::time::Duration::from_millis(100);
        loop {
            match subscriber.subscribe(channel.as_str()).await {
                Ok(()) => return,
                Err(error) if delay >= std::time::Duration::from_secs(5) => {
                    tracing::warn!(node = %name, %error, "cannot subscribe to release notifications; retrying");
                }
                Err(_) => {}
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(std::time::Duration::from_secs(10));
        }
    });
    Ok(client)
}

/// Unsubscribes and closes `subscriber`'s connection (at shutdown).
pub(crate) async fn quit(subscriber: &SubscriberClient) {
    let _ = subscriber.quit().await;
}

#[cfg(test)]
mod tests {
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
}
