//! Release notifications (DESIGN §4): the unlock script publishes the lock
//! key on `<prefix>:released` on every master; each daemon subscribes on
//! every master and wakes the head of its local queue for that resource at
//! once, so a hand-off costs about one round trip, not a retry delay.
//! Duplicates (one per master) are harmless: a wake-up is idempotent.

use std::sync::Arc;

use fred::clients::SubscriberClient;
use fred::prelude::{ClientLike, EventInterface, PubsubInterface};

use super::redis::{RedisNodeConfig, builder};
use super::scripts::released_channel;
use crate::waiters::Waiters;

/// Subscribes to master `config`'s release channel and forwards releases to
/// `waiters`; resubscribes after reconnects. Keep the client alive.
///
/// # Errors
/// When the URL cannot be parsed.
pub fn subscribe(config: &RedisNodeConfig, waiters: Arc<Waiters>) -> Result<SubscriberClient, String> {
    let (builder, name) = builder(config)?;
    let client = builder.build_subscriber_client().map_err(|e| e.to_string())?;
    // The message is the lock key, `<prefix>:<lock name>`.
    let lock_prefix = format!("{}:", config.key_prefix);
    client.on_message(move |message| {
        if let Some(name) = message
            .value
            .as_string()
            .and_then(|key| key.strip_prefix(&lock_prefix).map(str::to_owned))
        {
            waiters.released(&name);
        }
        async { Ok(()) }
    });
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
