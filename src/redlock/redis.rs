//! The `Node` implementation over one fred client per Redis master, and the
//! Lua scripts of DESIGN §1. Scripts are called by `EVALSHA`, reloaded on
//! `NOSCRIPT` (a restarted node has an empty script cache).

use std::time::Duration;

use fred::prelude::{
    Client, ClientLike, Config as FredConfig, EventInterface, LuaInterface, Options, ReconnectPolicy, Value,
};
use fred::types::Builder;
use fred::types::config::TlsConnector;

use super::node::{Node, NodeError};

/// Round 1 (DESIGN §1): lock, then advance the fence counter, seeding it from
/// the node's clock (µs) when missing. "Already mine" counts as success so a
/// re-sent command is harmless; it takes a fresh counter value, which keeps
/// every counter value handed out once. `string.format('%d')` keeps all
/// digits (`tostring` would print 1.7e+15).
const TRY_LOCK: &str = r"
local held = redis.call('GET', KEYS[1])
if held == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
elseif held ~= ARGV[1] then
  return false
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return redis.call('INCR', KEYS[2])
end
local t = redis.call('TIME')
local seed = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('SET', KEYS[2], string.format('%d', seed))
return seed
";

/// Round 2: while the lock is ours, raise the counter to at least ARGV[2].
const PUBLISH_FENCE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if current < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
";

/// Compare-and-`PEXPIRE`.
const EXTEND: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Compare-and-delete.
const UNLOCK: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// A Lua script and its SHA-1, computed once.
struct Script {
    lua: &'static str,
    sha: String,
}

impl Script {
    fn new(lua: &'static str) -> Script {
        Script {
            lua,
            sha: fred::util::sha1_hash(lua),
        }
    }
}

/// How to reach one master.
#[derive(Clone)]
pub struct RedisNodeConfig {
    /// `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS.
    pub url: String,
    /// The prefix of every key (`<prefix>:fence`, `<prefix>:lock:<resource>`).
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
    /// TLS roots and client certificate for `rediss://`; `None` = system roots.
    pub tls: Option<TlsConnector>,
}

/// One Redis master behind a fred client (auto-pipelined: concurrent
/// requests share the connection).
pub struct RedisNode {
    name: String,
    client: Client,
    options: Options,
    fence_key: String,
    try_lock: Script,
    publish_fence: Script,
    extend: Script,
    unlock: Script,
}

impl RedisNode {
    /// Creates the client and starts connecting in the background; a node
    /// that is down now keeps being retried with backoff.
    ///
    /// # Errors
    /// When the URL cannot be parsed.
    pub fn connect(config: &RedisNodeConfig) -> Result<RedisNode, String> {
        let mut fred_config = FredConfig::from_url(&config.url).map_err(|e| format!("{e}"))?;
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
        let client = Builder::from_config(fred_config)
            .with_connection_config(|c| {
                c.connection_timeout = config.connect_timeout;
                c.internal_command_timeout = config.command_timeout.max(config.connect_timeout);
                c.tcp.nodelay = Some(true);
            })
            .with_performance_config(|p| p.default_command_timeout = config.command_timeout)
            .set_policy(policy)
            .build()
            .map_err(|e| format!("{e}"))?;
        let log_name = name.clone();
        client.on_error(move |(error, _)| {
            tracing::warn!(node = %log_name, %error, "redis connection error");
            async { Ok(()) }
        });
        client.connect();
        Ok(RedisNode {
            name,
            client,
            // A command sent while the connection is down fails at once
            // instead of queueing: a dead node costs nothing in a round.
            options: Options {
                fail_fast: true,
                ..Options::default()
            },
            fence_key: format!("{}:fence", config.key_prefix),
            try_lock: Script::new(TRY_LOCK),
            publish_fence: Script::new(PUBLISH_FENCE),
            extend: Script::new(EXTEND),
            unlock: Script::new(UNLOCK),
        })
    }

    /// Waits until the first connection is up (for startup logs and tests).
    ///
    /// # Errors
    /// When the connection failed or did not come up within `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> Result<(), String> {
        match tokio::time::timeout(limit, self.client.wait_for_connect()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("not connected after {limit:?}")),
        }
    }

    /// The fred client, for administrative commands.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Runs a script by SHA, loading it first if the node does not know it.
    async fn eval(&self, script: &Script, key: &str, args: Vec<Value>) -> Result<Value, NodeError> {
        let client = self.client.with_options(&self.options);
        let keys = vec![key, self.fence_key.as_str()];
        let first = client.evalsha(script.sha.as_str(), keys.clone(), args.clone()).await;
        let result = match first {
            Err(e) if e.details().starts_with("NOSCRIPT") => {
                client.script_load::<String, _>(script.lua).await.map_err(node_error)?;
                client.evalsha(script.sha.as_str(), keys, args).await
            }
            other => other,
        };
        result.map_err(node_error)
    }
}

fn node_error(e: fred::error::Error) -> NodeError {
    NodeError(e.to_string())
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

fn ttl_arg(ttl: Duration) -> Value {
    Value::Integer(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1))
}

/// Reads an integer reply of 0 or 1 as a boolean.
fn flag(value: Value) -> Result<bool, NodeError> {
    match value {
        Value::Integer(n) => Ok(n != 0),
        other => Err(NodeError(format!("unexpected script reply {other:?}"))),
    }
}

impl Node for RedisNode {
    fn name(&self) -> &str {
        &self.name
    }

    async fn try_lock(&self, key: &str, value: &str, ttl: Duration) -> Result<Option<u64>, NodeError> {
        let reply = self.eval(&self.try_lock, key, vec![value.into(), ttl_arg(ttl)]).await?;
        match reply {
            Value::Null => Ok(None),
            Value::Integer(n) if n > 0 => Ok(Some(n as u64)),
            other => Err(NodeError(format!("unexpected lock reply {other:?}"))),
        }
    }

    async fn publish_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        let args = vec![value.into(), Value::from(counter.to_string())];
        flag(self.eval(&self.publish_fence, key, args).await?)
    }

    async fn extend(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, NodeError> {
        flag(self.eval(&self.extend, key, vec![value.into(), ttl_arg(ttl)]).await?)
    }

    async fn unlock(&self, key: &str, value: &str) -> Result<bool, NodeError> {
        flag(self.eval(&self.unlock, key, vec![value.into()]).await?)
    }
}
