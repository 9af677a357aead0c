//! Release notifications (docs/design.md#waiting): the unlock script publishes the lock
//! key on its bucket's channel `<prefix>:{<tag>}:released` (sharded on a
//! cluster) on every position; a daemon subscribes to a bucket's channel
//! on every position while it has waiters in that bucket, and wakes the
//! head of its local queue for the resource at once, so a hand-off costs
//! about one round trip, not a retry delay. Duplicates (one per position)
//! are harmless: a wake-up is idempotent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fred::clients::SubscriberClient;
use fred::prelude::{ClientLike, EventInterface, PubsubInterface};
use fred::types::Message;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::connect::{ConnectError, RedisNodeConfig, builder};
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

/// What one position's subscriber is asked to do, in order.
enum Change {
    Subscribe(String),
    Unsubscribe(String),
}

impl Change {
    /// Sends the change, sharded or not.
    async fn apply(&self, subscriber: &SubscriberClient, sharded: bool) -> Result<(), fred::error::Error> {
        match (self, sharded) {
            (Change::Subscribe(c), false) => subscriber.subscribe(c.as_str()).await,
            (Change::Subscribe(c), true) => subscriber.ssubscribe(c.as_str()).await,
            (Change::Unsubscribe(c), false) => subscriber.unsubscribe(c.as_str()).await,
            (Change::Unsubscribe(c), true) => subscriber.sunsubscribe(c.as_str()).await,
        }
    }
}

/// One position's subscriber: a connection of its own that hears the
/// release channels of the buckets this daemon has waiters in.
pub(crate) struct Subscriber {
    client: SubscriberClient,
    changes: mpsc::UnboundedSender<Change>,
}

/// Connects to position `config`'s subscriber connection and forwards what
/// it hears to `on_release`; resubscribes after reconnects. Subscribes to
/// nothing until `Interest` says a bucket has waiters.
///
/// # Errors
/// When the URL cannot be parsed.
pub(crate) fn subscribe(config: &RedisNodeConfig, on_release: OnRelease) -> Result<Subscriber, ConnectError> {
    let (mut builder, name) = builder(config)?;
    // Room for a burst of releases (the default is 32); past it the loop
    // below wakes every head instead. fred gives each of a client's nine
    // event channels this many slots, all allocated at start: 1024 cost
    // ~2 MB of the idle daemon's memory (docs/performance.md, workload (d)).
    builder.with_performance_config(|p| p.broadcast_channel_capacity = 256);
    let client = builder.build_subscriber_client().map_err(ConnectError::Client)?;
    // The message is the lock key, `<prefix>:{<tag>}:<lock name>`.
    let lock_prefix = format!("{}:", config.key_prefix);
    // Our own loop, not fred's `on_message`: that one stops for good at the
    // first `Lagged` (a burst of releases overran the broadcast buffer), and
    // every wake-up after it would wait out a retry delay.
    tokio::spawn(forward(client.message_rx(), lock_prefix, on_release));
    // Detached: it resubscribes after every reconnect for the client's life.
    drop(client.manage_subscriptions());
    client.connect();
    let (changes, mut asked) = mpsc::unbounded_channel::<Change>();
    let subscriber = client.clone();
    // One change at a time, in the order asked: a bucket's subscribe and
    // unsubscribe never pass each other.
    tokio::spawn(async move {
        // Sharded pub/sub on a cluster of Redis 7 or later; a cluster of
        // older servers (no `SSUBSCRIBE`) is announced to by `PUBLISH`,
        // which reaches every node (`Batches::publish`).
        let mut sharded = subscriber.is_clustered();
        while let Some(change) = asked.recv().await {
            let mut done = change.apply(&subscriber, sharded).await;
            if sharded && done.as_ref().is_err_and(|e| e.details().contains("unknown command")) {
                sharded = false;
                done = change.apply(&subscriber, sharded).await;
            }
            // A waiter that missed its wake-up tries again at its retry
            // delay (docs/design.md#waiting).
            if let Err(error) = done {
                tracing::debug!(node = %name, %error, "a release channel (un)subscription failed");
            }
        }
    });
    Ok(Subscriber { client, changes })
}

/// Which buckets this daemon has waiters in (docs/design.md#waiting): the
/// release channel of a bucket is subscribed on every position while any
/// lock of the bucket has a waiter here, and only then, so a daemon hears
/// the releases it waits for and no others.
pub(crate) struct Interest {
    key_prefix: String,
    subscribers: Vec<Subscriber>,
    waited: Mutex<HashMap<String, usize>>,
}

impl Interest {
    pub(crate) fn new(key_prefix: &str, subscribers: Vec<Subscriber>) -> Interest {
        Interest {
            key_prefix: key_prefix.to_owned(),
            subscribers,
            waited: Mutex::default(),
        }
    }

    /// Lock `name` got its first waiter (`true`) or lost its last.
    pub(crate) fn changed(&self, name: &str, waiting: bool) {
        let channel = released_channel(&buckets::key(&self.key_prefix, name));
        let mut waited = self.waited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = waited.entry(channel.clone()).or_default();
        let change = match (waiting, *count) {
            (true, 0) => Some(Change::Subscribe(channel.clone())),
            (false, 1) => Some(Change::Unsubscribe(channel.clone())),
            _ => None,
        };
        *count = if waiting { *count + 1 } else { count.saturating_sub(1) };
        if *count == 0 {
            waited.remove(&channel);
        }
        if let Some(change) = change {
            for subscriber in &self.subscribers {
                let _ = subscriber.changes.send(match &change {
                    Change::Subscribe(c) => Change::Subscribe(c.clone()),
                    Change::Unsubscribe(c) => Change::Unsubscribe(c.clone()),
                });
            }
        }
    }

    /// Unsubscribes and closes every subscriber connection (at shutdown).
    pub(crate) async fn quit(&self) {
        for subscriber in &self.subscribers {
            let _ = subscriber.client.quit().await;
        }
    }
}

#[cfg(test)]
#[path = "subscriber_tests.rs"]
mod tests;
