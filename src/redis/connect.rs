//! How to reach one master: its settings and the fred client builder
//! (URL, TLS, timeouts, reconnect backoff).

use std::time::Duration;

use fred::prelude::{Config as FredConfig, ReconnectPolicy};
use fred::types::Builder;
use fred::types::config::TlsConnector;

use super::cluster::EmptySeed;
use super::conn::millis;

/// How to reach one master.
#[derive(Clone)]
pub struct RedisNodeConfig {
    /// `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS;
    /// `redis-cluster://host:port[,host:port…]` (or `rediss-cluster://`)
    /// for a position served by a Redis Cluster.
    pub url: String,
    /// The prefix of every key (docs/design.md#keys).
    pub key_prefix: String,
    /// Bound on establishing a connection.
    pub connect_timeout: Duration,
    /// Bound on one command inside fred (the engine applies its own, shorter,
    /// per-round timeout on top).
    pub command_timeout: Duration,
    /// Reconnect backoff: first delay.
    pub reconnect_min_delay: Duration,
    /// Reconnect backoff: largest delay.
    pub reconnect_max_delay: Duration,
    /// The engine's per-node bound in a round.
    pub node_timeout: Duration,
    /// How long an exclusive request refused by shared holders keeps new
    /// shared holders out (docs/design.md#shared-locks): longer than a
    /// waiting writer's gap between two attempts.
    pub writer_wait: Duration,
    /// TLS roots and client certificate for `rediss://`; `None` = system roots.
    pub tls: Option<TlsConnector>,
}

/// Why a master's client could not be made. The URL itself is not kept:
/// it may hold a password.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A clustered URL with an empty seed.
    #[error(transparent)]
    EmptySeed(#[from] EmptySeed),
    /// fred cannot read the URL: what it said.
    #[error("{0}")]
    Url(fred::error::Error),
    /// fred could not make the client from its settings.
    #[error("{0}")]
    Client(fred::error::Error),
}

/// `redis.nodes` cannot be used as it is (`check_urls`).
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum NodesError {
    /// Entry `index` is a clustered URL with an empty seed.
    #[error("redis.nodes[{index}] is not a valid Redis URL: {cause}")]
    EmptySeed {
        /// Its index in `redis.nodes`.
        index: usize,
        /// The seed list's fault.
        cause: EmptySeed,
    },
    /// fred cannot read entry `index`.
    #[error("redis.nodes[{index}] is not a valid Redis URL: {}", .cause.details())]
    InvalidUrl {
        /// Its index in `redis.nodes`.
        index: usize,
        /// What fred said.
        cause: fred::error::Error,
    },
    /// Entries `first` and `index` name the same master: it would vote twice.
    #[error("redis.nodes[{index}] is the same master as redis.nodes[{first}]: list independent masters")]
    SameMaster {
        /// The later entry.
        index: usize,
        /// The entry that named it first.
        first: usize,
    },
}

/// A master's first connection is not up (`RedisNode::wait_connected`).
#[derive(Debug, thiserror::Error)]
pub enum NotConnected {
    /// The connection failed: what fred said.
    #[error("{0}")]
    Failed(fred::error::Error),
    /// It did not come up within `limit`.
    #[error("not connected after {limit:?}")]
    TimedOut {
        /// How long it was waited for.
        limit: Duration,
    },
}

/// A fred builder for `config` (URL, TLS, timeouts, reconnect backoff) and
/// the node's `host:port` name.
///
/// # Errors
/// When the URL cannot be parsed.
pub fn builder(config: &RedisNodeConfig) -> Result<(Builder, String), ConnectError> {
    let mut fred_config = FredConfig::from_url(&super::cluster::fred_url(&config.url)?).map_err(ConnectError::Url)?;
    if let (Some(_), Some(connector)) = (&fred_config.tls, &config.tls) {
        fred_config.tls = Some(connector.clone().into());
    }
    // Retry the first connection too: the daemon starts with a node down.
    fred_config.fail_fast = false;
    let name = fred_config
        .server
        .hosts()
        .first()
        .map_or_else(|| "?".to_owned(), |s| format!("{}:{}", s.host, s.port));
    let policy = ReconnectPolicy::new_exponential(
        0,
        millis(config.reconnect_min_delay),
        millis(config.reconnect_max_delay),
        2,
    );
    let mut builder = Builder::from_config(fred_config);
    builder
        .with_connection_config(|c| {
            c.connection_timeout = config.connect_timeout;
            c.internal_command_timeout = config.command_timeout.max(config.connect_timeout);
            c.tcp.nodelay = Some(true);
        })
        .with_performance_config(|p| p.default_command_timeout = config.command_timeout)
        .set_policy(policy);
    Ok((builder, name))
}

/// Checks, before anything connects, that fred can use every URL of
/// `redis.nodes` and that no master is listed twice (it would vote twice).
///
/// # Errors
/// What is wrong, naming the entry.
pub fn check_urls(urls: &[String]) -> Result<(), NodesError> {
    let mut seen: Vec<(String, u16)> = Vec::new();
    for (index, url) in urls.iter().enumerate() {
        let parsed = super::cluster::fred_url(url).map_err(|cause| NodesError::EmptySeed { index, cause })?;
        let parsed = FredConfig::from_url(&parsed).map_err(|cause| NodesError::InvalidUrl { index, cause })?;
        for server in parsed.server.hosts() {
            let address = (server.host.to_string(), server.port);
            if let Some(first) = seen.iter().position(|a| *a == address) {
                return Err(NodesError::SameMaster { index, first });
            }
            seen.push(address);
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;
