//! Typed configuration: `config/default.toml` (compiled in), then an
//! optional `--config` file, then `REDLOCKD__SECTION__KEY` environment
//! variables; validated before any port is bound, with errors that name the
//! setting.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

use crate::api::auth::Auth;
use crate::redis::node::RedisNodeConfig;
use crate::redlock::EngineConfig;
use crate::redlock::health::Rules;
use crate::redlock::quorum::MAX_NODES;
use fred::types::config::TlsConnector;

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
}

/// `[auth]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// The tenants file; unset = no authentication.
    #[serde(default)]
    pub tokens_file: Option<PathBuf>,
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
}

/// A configuration that cannot be used; the message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Bounds on `server.max_message_size`: every request fits in 1 KiB.
const MIN_MESSAGE_SIZE: usize = 1024;
const MAX_MESSAGE_SIZE: usize = 1024 * 1024;
/// A client that has not finished its TLS handshake by then is dropped.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest wait anyone may configure.
const MAX_WAIT_LIMIT: Duration = Duration::from_secs(3600);
/// The longest TTL anyone may configure.
const MAX_TTL_LIMIT: Duration = Duration::from_secs(24 * 3600);

impl Config {
    /// Loads defaults, then `file` (if any), then the environment: the
    /// process's, or `env` when given (tests pass a map, never `set_var`).
    ///
    /// # Errors
    /// When a source cannot be read or parsed, or the result is invalid.
    pub fn load(file: Option<&Path>, env: Option<HashMap<String, String>>) -> Result<Config, ConfigError> {
        let config: Config = Config::sources(file, env)?
            .try_deserialize()
            .map_err(|e| ConfigError(e.to_string()))?;
        config.validate()?;
        Ok(config)
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

    /// Checks every cross-field rule.
    ///
    /// # Errors
    /// The first rule broken, naming the setting and the allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |msg: String| Err(ConfigError(msg));
        let (redis, lock) = (&self.redis, &self.lock);
        let n = redis.nodes.len();
        if n < 3 || n % 2 == 0 || n > MAX_NODES {
            return fail(format!(
                "redis.nodes lists {n} masters: list an odd number from 3 to {} of independent masters",
                MAX_NODES - 1
            ));
        }
        let mut seen = Vec::new();
        for (i, url) in redis.nodes.iter().enumerate() {
            if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                return fail(format!("redis.nodes[{i}] must start with redis:// or rediss://"));
            }
            let parsed = match fred::types::config::Config::from_url(url) {
                Ok(parsed) => parsed,
                Err(e) => return fail(format!("redis.nodes[{i}] is not a valid Redis URL: {}", e.details())),
            };
            // One master listed twice would vote twice.
            for server in parsed.server.hosts() {
                let address = (server.host.to_string(), server.port);
                if let Some(j) = seen.iter().position(|a| *a == address) {
                    return fail(format!(
                        "redis.nodes[{i}] is the same master as redis.nodes[{j}]: list independent masters"
                    ));
                }
                seen.push(address);
            }
        }
        if redis.key_prefix.is_empty() || redis.key_prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return fail("redis.key_prefix must be non-empty, without spaces or control characters".into());
        }
        if self.server.keepalive < Duration::from_millis(100) || self.server.keepalive > Duration::from_secs(300) {
            return fail(format!(
                "server.keepalive ({}) must lie within [100ms, 5m]",
                show(self.server.keepalive)
            ));
        }
        if self.server.shutdown_grace > Duration::from_secs(300) {
            return fail(format!(
                "server.shutdown_grace ({}) must be at most 5m",
                show(self.server.shutdown_grace)
            ));
        }
        self.validate_server()?;
        if redis.node_timeout.is_zero() {
            return fail("redis.node_timeout must be above 0".into());
        }
        if redis.node_timeout * 5 > lock.min_ttl {
            return fail(format!(
                "redis.node_timeout ({}) must be at most a fifth of lock.min_ttl ({})",
                show(redis.node_timeout),
                show(lock.min_ttl)
            ));
        }
        for (name, d) in [
            ("redis.connect_timeout", redis.connect_timeout),
            ("redis.command_timeout", redis.command_timeout),
            ("redis.reconnect_min_delay", redis.reconnect_min_delay),
        ] {
            if d.is_zero() {
                return fail(format!("{name} must be above 0"));
            }
        }
        if redis.tls_cert_file.is_some() != redis.tls_key_file.is_some() {
            return fail("redis.tls_cert_file and redis.tls_key_file must be set together".into());
        }
        for (name, path) in [
            ("redis.tls_ca_file", &redis.tls_ca_file),
            ("redis.tls_cert_file", &redis.tls_cert_file),
            ("redis.tls_key_file", &redis.tls_key_file),
        ] {
            if let Some(path) = path
                && !path.is_file()
            {
                return fail(format!("{name} ({}) is not a readable file", path.display()));
            }
        }
        if redis.reconnect_max_delay < redis.reconnect_min_delay {
            return fail("redis.reconnect_max_delay must be at least redis.reconnect_min_delay".into());
        }
        if lock.min_ttl.is_zero() || lock.min_ttl > lock.max_ttl || lock.max_ttl > MAX_TTL_LIMIT {
            return fail(format!(
                "lock.min_ttl ({}) and lock.max_ttl ({}) must satisfy 0 < min_ttl <= max_ttl <= 24h",
                show(lock.min_ttl),
                show(lock.max_ttl)
            ));
        }
        if lock.default_ttl < lock.min_ttl || lock.default_ttl > lock.max_ttl {
            return fail(format!(
                "lock.default_ttl ({}) must lie within [lock.min_ttl, lock.max_ttl] = [{}, {}]",
                show(lock.default_ttl),
                show(lock.min_ttl),
                show(lock.max_ttl)
            ));
        }
        if lock.max_wait > MAX_WAIT_LIMIT {
            return fail(format!("lock.max_wait ({}) must be at most 1h", show(lock.max_wait)));
        }
        if !(0.0..0.5).contains(&lock.drift_factor) {
            return fail(format!("lock.drift_factor ({}) must be in [0, 0.5)", lock.drift_factor));
        }
        if lock.min_validity >= lock.min_ttl {
            return fail("lock.min_validity must be below lock.min_ttl".into());
        }
        if lock.retry_delay_min.is_zero()
            || lock.retry_delay_max < lock.retry_delay_min
            || lock.retry_delay_max > Duration::from_secs(10)
        {
            return fail(format!(
                "lock.retry_delay_min ({}) and lock.retry_delay_max ({}) must satisfy 0 < min <= max <= 10s",
                show(lock.retry_delay_min),
                show(lock.retry_delay_max)
            ));
        }
        if lock.max_hold.is_zero() {
            return fail("lock.max_hold must be above 0".into());
        }
        for (name, n) in [
            ("lock.max_waiters_per_resource", lock.max_waiters_per_resource),
            ("lock.max_waiters", lock.max_waiters),
            ("lock.max_sessions", lock.max_sessions),
        ] {
            if n == 0 || n > 1_000_000 {
                return fail(format!("{name} ({n}) must lie within [1, 1000000]"));
            }
        }
        if lock.max_handoffs_in_row > 1000 {
            return fail(format!(
                "lock.max_handoffs_in_row ({}) must lie within [0, 1000]",
                lock.max_handoffs_in_row
            ));
        }
        if self.safety.check_interval < Duration::from_millis(10)
            || self.safety.check_interval > Duration::from_secs(60)
        {
            return fail(format!(
                "safety.check_interval ({}) must lie within [10ms, 1m]",
                show(self.safety.check_interval)
            ));
        }
        if self.safety.clock_jump_bound.is_zero() {
            return fail("safety.clock_jump_bound must be above 0".into());
        }
        self.redis_tls()?;
        Ok(())
    }

    /// The `[server]` rules: TLS files and connection limits.
    fn validate_server(&self) -> Result<(), ConfigError> {
        let fail = |msg: String| Err(ConfigError(msg));
        let server = &self.server;
        if server.tls_cert_file.is_some() != server.tls_key_file.is_some() {
            return fail("server.tls_cert_file and server.tls_key_file must be set together".into());
        }
        if server.tls_client_ca_file.is_some() && server.tls_cert_file.is_none() {
            return fail(
                "server.tls_client_ca_file (mutual TLS) needs server.tls_cert_file and server.tls_key_file".into(),
            );
        }
        for (name, path) in [
            ("server.tls_cert_file", &server.tls_cert_file),
            ("server.tls_key_file", &server.tls_key_file),
            ("server.tls_client_ca_file", &server.tls_client_ca_file),
            ("auth.tokens_file", &self.auth.tokens_file),
        ] {
            if let Some(path) = path
                && !path.is_file()
            {
                return fail(format!("{name} ({}) is not a readable file", path.display()));
            }
        }
        check_worker_threads(server.worker_threads)?;
        if !(MIN_MESSAGE_SIZE..=MAX_MESSAGE_SIZE).contains(&server.max_message_size) {
            return fail(format!(
                "server.max_message_size ({}) must lie within [{MIN_MESSAGE_SIZE}, {MAX_MESSAGE_SIZE}] bytes",
                server.max_message_size
            ));
        }
        if !(1..=100_000).contains(&server.max_concurrent_streams) {
            return fail(format!(
                "server.max_concurrent_streams ({}) must lie within [1, 100000]",
                server.max_concurrent_streams
            ));
        }
        if !(1..=100_000).contains(&server.max_requests_per_connection) {
            return fail(format!(
                "server.max_requests_per_connection ({}) must lie within [1, 100000]",
                server.max_requests_per_connection
            ));
        }
        self.server_tls()?;
        self.auth()?;
        Ok(())
    }

    /// TLS for the gRPC listener, if `server.tls_cert_file` is set.
    ///
    /// # Errors
    /// A message naming the file that could not be read.
    pub fn server_tls(&self) -> Result<Option<tonic::transport::ServerTlsConfig>, ConfigError> {
        use tonic::transport::{Certificate, Identity, ServerTlsConfig};
        let server = &self.server;
        let (Some(cert), Some(key)) = (&server.tls_cert_file, &server.tls_key_file) else {
            return Ok(None);
        };
        let read = |name: &str, path: &Path| {
            std::fs::read(path).map_err(|e| ConfigError(format!("{name} ({}): {e}", path.display())))
        };
        let (cert_pem, key_pem) = (read("server.tls_cert_file", cert)?, read("server.tls_key_file", key)?);
        // Checked here, so a bad file stops the daemon at start (exit 64)
        // with the setting's name, not at the first connection.
        pem_certificates("server.tls_cert_file", cert, &cert_pem)?;
        PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
            ConfigError(format!(
                "server.tls_key_file ({}): no PEM private key: {e}",
                key.display()
            ))
        })?;
        let mut tls = ServerTlsConfig::new()
            .identity(Identity::from_pem(cert_pem, key_pem))
            .timeout(TLS_HANDSHAKE_TIMEOUT);
        if let Some(ca) = &server.tls_client_ca_file {
            let ca_pem = read("server.tls_client_ca_file", ca)?;
            pem_certificates("server.tls_client_ca_file", ca, &ca_pem)?;
            tls = tls.client_ca_root(Certificate::from_pem(ca_pem));
        }
        Ok(Some(tls))
    }

    /// The bearer tokens, from `auth.tokens_file` (`token_env` entries read
    /// the process environment).
    ///
    /// # Errors
    /// A message naming the file, the tenant and the field.
    pub fn auth(&self) -> Result<Auth, ConfigError> {
        match &self.auth.tokens_file {
            None => Ok(Auth::off()),
            Some(path) => Auth::load(path, &|var| std::env::var(var).ok()),
        }
    }

    /// The quarantine rules.
    pub fn rules(&self) -> Rules {
        Rules {
            quarantine: self.safety.quarantine,
            max_ttl: self.lock.max_ttl,
            clock_jump_bound: self.safety.clock_jump_bound,
        }
    }

    /// The engine's part of the configuration.
    pub fn engine(&self) -> EngineConfig {
        EngineConfig {
            key_prefix: self.redis.key_prefix.clone(),
            node_timeout: self.redis.node_timeout,
            drift_factor: self.lock.drift_factor,
            min_validity: self.lock.min_validity,
            retry_delay_min: self.lock.retry_delay_min,
            retry_delay_max: self.lock.retry_delay_max,
            publish_round: true,
        }
    }

    /// The TLS connector for `rediss://` masters, if files are configured.
    ///
    /// # Errors
    /// A message naming the file that could not be used.
    pub fn redis_tls(&self) -> Result<Option<TlsConnector>, ConfigError> {
        let redis = &self.redis;
        crate::redis::tls::connector(
            redis.tls_ca_file.as_deref(),
            redis.tls_cert_file.as_deref(),
            redis.tls_key_file.as_deref(),
        )
        .map_err(|e| ConfigError(format!("redis TLS: {e}")))
    }

    /// The connection settings of master `url`.
    pub fn node(&self, url: &str, tls: Option<TlsConnector>) -> RedisNodeConfig {
        RedisNodeConfig {
            tls,
            url: url.to_owned(),
            key_prefix: self.redis.key_prefix.clone(),
            connect_timeout: self.redis.connect_timeout,
            command_timeout: self.redis.command_timeout,
            reconnect_min_delay: self.redis.reconnect_min_delay,
            reconnect_max_delay: self.redis.reconnect_max_delay,
            node_timeout: self.redis.node_timeout,
        }
    }
}

/// Checks that `pem` (read from `path`, the setting `name`) holds at least
/// one certificate.
fn pem_certificates(name: &str, path: &Path, pem: &[u8]) -> Result<(), ConfigError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError(format!("{name} ({}): {e}", path.display())))?;
    if certs.is_empty() {
        return Err(ConfigError(format!(
            "{name} ({}): no PEM certificate in it",
            path.display()
        )));
    }
    Ok(())
}

/// A duration the way the config file writes it.
pub fn show(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
