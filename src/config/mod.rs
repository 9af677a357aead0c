//! Typed configuration (docs/configuration.md): `config/default.toml`
//! (compiled in), then an optional `--config` file, then
//! `REDLOCKD__SECTION__KEY` environment variables; validated before any port
//! is bound, with errors that name the setting (the cross-field rules are
//! in `rules`). The files it names, TLS certificates and the tenants file
//! (`tenants`), are read once at load (`files`); `[telemetry]` is in
//! `telemetry`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use files::{Files, RedisTls, ServerTls};
pub use telemetry::{OtlpConfig, TelemetryConfig};

mod files;
mod rules;
mod telemetry;
pub(crate) mod tenants;

/// The defaults, compiled in so the binary runs without the file.
pub const DEFAULT_TOML: &str = include_str!("../../config/default.toml");

/// The daemon's configuration. Field docs are in `config/default.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The gRPC server.
    pub server: ServerConfig,
    /// Logging.
    pub log: LogConfig,
    /// The Redis masters.
    pub redis: RedisConfig,
    /// Lock limits and timing.
    pub lock: LockConfig,
    /// Quarantine, preflight and clock guard.
    pub safety: SafetyConfig,
    /// The Prometheus endpoint.
    pub metrics: MetricsConfig,
    /// Bearer tokens and tenants.
    #[serde(default)]
    pub auth: AuthConfig,
    /// The admin service.
    #[serde(default)]
    pub admin: AdminConfig,
    /// The read-only status page beside `/metrics`.
    #[serde(default)]
    pub status_page: StatusPageConfig,
    /// OpenTelemetry traces.
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// What the files named above hold, read once by `load`.
    #[serde(skip)]
    pub files: Files,
}

/// `[auth]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// The tenants file; unset = no authentication.
    #[serde(default)]
    pub tokens_file: Option<PathBuf>,
}

/// `[admin]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdminConfig {
    /// Admin calls without authentication (loopback only).
    #[serde(default)]
    pub allow_unauthenticated: bool,
}

/// `[status_page]` (docs/operations.md#status-page)
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusPageConfig {
    /// Serve the page at `/status` on `metrics.listen`.
    #[serde(default)]
    pub enabled: bool,
}

/// `[metrics]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Where `/metrics` is served.
    pub listen: SocketAddr,
}

/// `[safety]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyConfig {
    /// Quarantine restarted, failed-over, young or clock-jumped masters.
    pub quarantine: bool,
    /// Probe interval.
    #[serde(with = "humantime_serde")]
    pub check_interval: Duration,
    /// Clock-jump threshold.
    #[serde(with = "humantime_serde")]
    pub clock_jump_bound: Duration,
}

/// `[server]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// How long open connections get to finish after SIGTERM.
    #[serde(with = "humantime_serde")]
    pub shutdown_grace: Duration,
    /// HTTP/2 ping interval and timeout (and TCP keepalive) on client
    /// connections: a vanished client is noticed after about twice this.
    #[serde(with = "humantime_serde")]
    pub keepalive: Duration,
    /// The server's certificate chain (PEM); set = TLS.
    #[serde(default)]
    pub tls_cert_file: Option<PathBuf>,
    /// The server certificate's private key (PEM).
    #[serde(default)]
    pub tls_key_file: Option<PathBuf>,
    /// CA bundle (PEM) that client certificates must chain to; set = mutual
    /// TLS, a client without such a certificate is refused.
    #[serde(default)]
    pub tls_client_ca_file: Option<PathBuf>,
    /// Largest request message, in bytes.
    pub max_message_size: usize,
    /// Most concurrent HTTP/2 streams (calls, sessions included) per client
    /// connection.
    pub max_concurrent_streams: u32,
    /// Most requests handled at once per client connection; more wait.
    pub max_requests_per_connection: usize,
    /// Threads of the async runtime; 0 = half the available cores, at
    /// least 1 (`ServerConfig::workers`).
    pub worker_threads: usize,
}

/// The largest `server.worker_threads`.
const MAX_WORKER_THREADS: usize = 64;

impl ServerConfig {
    /// The runtime's thread count (see `runtime_threads`).
    pub fn workers(&self) -> usize {
        runtime_threads(self.worker_threads)
    }
}

/// `server.worker_threads` resolved: as set, or for 0 half the cores this
/// process may use (cgroup quotas count), at least 1.
fn runtime_threads(worker_threads: usize) -> usize {
    match worker_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
        n => n,
    }
}

fn check_worker_threads(threads: usize) -> Result<(), ConfigError> {
    if threads > MAX_WORKER_THREADS {
        return Err(ConfigError(format!(
            "server.worker_threads ({threads}) must lie within [0, {MAX_WORKER_THREADS}] (0 = half the cores)"
        )));
    }
    Ok(())
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For people.
    Human,
    /// One JSON object per line, for collectors.
    Json,
}

/// `[log]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// `human` or `json`.
    pub format: LogFormat,
    /// A tracing filter directive.
    pub filter: String,
}

/// `[redis]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisConfig {
    /// Master URLs, in token-index order.
    pub nodes: Vec<String>,
    /// Key namespace.
    pub key_prefix: String,
    /// Per-node bound within a round.
    #[serde(with = "humantime_serde")]
    pub node_timeout: Duration,
    /// Connection establishment bound.
    #[serde(with = "humantime_serde")]
    pub connect_timeout: Duration,
    /// Single-command bound.
    #[serde(with = "humantime_serde")]
    pub command_timeout: Duration,
    /// Reconnect backoff start.
    #[serde(with = "humantime_serde")]
    pub reconnect_min_delay: Duration,
    /// Reconnect backoff cap.
    #[serde(with = "humantime_serde")]
    pub reconnect_max_delay: Duration,
    /// CA bundle (PEM) trusted for `rediss://` masters; unset = system roots.
    #[serde(default)]
    pub tls_ca_file: Option<PathBuf>,
    /// Client certificate chain (PEM) for masters that verify clients.
    #[serde(default)]
    pub tls_cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[serde(default)]
    pub tls_key_file: Option<PathBuf>,
}

/// `[lock]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// TTL when a request leaves it unset.
    #[serde(with = "humantime_serde")]
    pub default_ttl: Duration,
    /// Smallest TTL a request may ask for.
    #[serde(with = "humantime_serde")]
    pub min_ttl: Duration,
    /// Largest TTL a request may ask for.
    #[serde(with = "humantime_serde")]
    pub max_ttl: Duration,
    /// Longest wait a request may ask for.
    #[serde(with = "humantime_serde")]
    pub max_wait: Duration,
    /// Drift per unit of TTL.
    pub drift_factor: f64,
    /// Smallest validity worth granting.
    #[serde(with = "humantime_serde")]
    pub min_validity: Duration,
    /// Retry delay lower bound.
    #[serde(with = "humantime_serde")]
    pub retry_delay_min: Duration,
    /// Retry delay upper bound.
    #[serde(with = "humantime_serde")]
    pub retry_delay_max: Duration,
    /// Longest `max_hold` a session may ask for.
    #[serde(with = "humantime_serde")]
    pub max_hold: Duration,
    /// Most requests waiting for one resource in this daemon.
    pub max_waiters_per_resource: usize,
    /// Most requests waiting in this daemon in all.
    pub max_waiters: usize,
    /// Most open Hold sessions in this daemon.
    pub max_sessions: usize,
    /// Most releases in a row handed straight to this daemon's next waiter,
    /// once a waiter on another daemon was refused, before one is published
    /// for every daemon (0: never hand off).
    pub max_handoffs_in_row: u32,
    /// The most permits a semaphore may have.
    pub max_permits: u32,
    /// The longest `lock_delay` a session or campaign may ask for
    /// (docs/design.md#lock-delay).
    #[serde(with = "humantime_serde")]
    pub max_lock_delay: Duration,
    /// How often observers and watchers read the state again when they
    /// heard of no change (docs/design.md#observe-and-watch).
    #[serde(with = "humantime_serde")]
    pub watch_period: Duration,
}

/// A configuration that cannot be used; the message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Bounds on `server.max_message_size`: every request fits in 1 KiB.
/// The most masters `redis.nodes` may list: a fencing token's low 4 bits
/// name the master that minted it (docs/design.md#the-fencing-token).
pub const MAX_NODES: usize = 16;

impl Config {
    /// Loads defaults, then `file` (if any), then the environment: the
    /// process's, or `env` when given (tests pass a map, never `set_var`).
    ///
    /// # Errors
    /// When a source cannot be read or parsed, or the result is invalid.
    pub fn load(file: Option<&Path>, env: Option<HashMap<String, String>>) -> Result<Config, ConfigError> {
        let otel_vars: Option<HashMap<String, String>> = env.as_ref().map(|env| {
            (telemetry::ENDPOINT_VARIABLES.iter())
                .filter_map(|name| Some(((*name).to_owned(), env.get(*name)?.clone())))
                .collect()
        });
        let mut config: Config = Config::sources(file, env)?
            .try_deserialize()
            .map_err(|e| ConfigError(e.to_string()))?;
        config.redis.nodes = seeds_folded(std::mem::take(&mut config.redis.nodes));
        config.validate()?;
        config.telemetry.otlp.resolve(|name| match &otel_vars {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        })?;
        let env = |var: &str| std::env::var(var).ok();
        Ok(Config {
            files: Files::read(&config, &env)?,
            ..config
        })
    }

    /// Reads only `server.worker_threads` (and checks its range): the
    /// runtime is built before the rest is loaded (`redlockd dev` starts its
    /// masters on it first, and their addresses are part of the config).
    ///
    /// # Errors
    /// When a source cannot be read or parsed, or the value is out of range.
    pub fn workers(file: Option<&Path>, env: Option<HashMap<String, String>>) -> Result<usize, ConfigError> {
        let threads: usize = Config::sources(file, env)?
            .get("server.worker_threads")
            .map_err(|e| ConfigError(e.to_string()))?;
        check_worker_threads(threads)?;
        Ok(runtime_threads(threads))
    }

    /// Defaults, then `file`, then the environment, not yet deserialized.
    fn sources(file: Option<&Path>, env: Option<HashMap<String, String>>) -> Result<config::Config, ConfigError> {
        let mut builder =
            config::Config::builder().add_source(config::File::from_str(DEFAULT_TOML, config::FileFormat::Toml));
        if let Some(path) = file {
            builder = builder.add_source(config::File::from(path).required(true));
        }
        let environment = config::Environment::with_prefix("REDLOCKD")
            .prefix_separator("__")
            .separator("__")
            .list_separator(",")
            .with_list_parse_key("redis.nodes")
            .try_parsing(true)
            .source(env);
        builder
            .add_source(environment)
            .build()
            .map_err(|e| ConfigError(e.to_string()))
    }
}

/// `redis.nodes` with each entry that names no scheme (`host:port`) added
/// to the entry before it as one more seed of the same cluster: the
/// environment splits its list at commas, and a cluster position is
/// `redis-cluster://host:port,host:port…` (docs/configuration.md).
fn seeds_folded(nodes: Vec<String>) -> Vec<String> {
    let mut folded: Vec<String> = Vec::with_capacity(nodes.len());
    for node in nodes {
        match folded.last_mut() {
            Some(last) if !node.contains("://") && last.contains("-cluster://") => {
                last.push(',');
                last.push_str(node.trim());
            }
            _ => folded.push(node),
        }
    }
    folded
}

/// A duration the way the config file writes it.
pub fn show(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
