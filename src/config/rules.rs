//! The cross-field rules of the configuration: every value in its range,
//! every pair consistent; each broken rule names its setting.

use std::time::Duration;

use super::{Config, ConfigError, MAX_NODES, check_worker_threads, show};

/// Smallest and largest `server.max_message_size`, in bytes.
const MIN_MESSAGE_SIZE: usize = 1024;
const MAX_MESSAGE_SIZE: usize = 1024 * 1024;
/// The longest `lock.max_wait`.
const MAX_WAIT_LIMIT: Duration = Duration::from_secs(3600);
/// The longest `lock.max_ttl`.
const MAX_TTL_LIMIT: Duration = Duration::from_secs(24 * 3600);

impl Config {
    /// Checks every cross-field rule.
    ///
    /// # Errors
    /// The first rule broken, naming the setting and the allowed range.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let fail = |msg: String| Err(ConfigError(msg));
        let (redis, lock) = (&self.redis, &self.lock);
        let n = redis.nodes.len();
        if n < 3 || n % 2 == 0 || n > MAX_NODES {
            return fail(format!(
                "redis.nodes lists {n} masters: list an odd number from 3 to {} of independent masters",
                MAX_NODES - 1
            ));
        }
        // The URLs themselves, and a master listed twice, are checked with
        // fred's own parser before any port is bound (redis::connect::check_urls).
        for (i, url) in redis.nodes.iter().enumerate() {
            let schemes = ["redis://", "rediss://", "redis-cluster://", "rediss-cluster://"];
            if !schemes.iter().any(|s| url.starts_with(s)) {
                return fail(format!(
                    "redis.nodes[{i}] must start with redis://, rediss://, redis-cluster:// or rediss-cluster://"
                ));
            }
        }
        let bad = |c: char| c.is_whitespace() || c.is_control() || c == '{' || c == '}';
        if redis.key_prefix.is_empty() || redis.key_prefix.chars().any(bad) {
            return fail(
                "redis.key_prefix must be non-empty, without spaces, control characters or braces (the keys' hash tags \
                 are braces: docs/design.md#keys)"
                    .into(),
            );
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
        if !(Duration::from_millis(10)..=Duration::from_secs(60)).contains(&lock.watch_period) {
            return fail(format!(
                "lock.watch_period ({}) must be between 10ms and 1m",
                show(lock.watch_period)
            ));
        }
        if lock.max_lock_delay > Duration::from_secs(3600) {
            return fail(format!(
                "lock.max_lock_delay ({}) must be at most 1h",
                show(lock.max_lock_delay)
            ));
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
        if !(2..=1024).contains(&lock.max_permits) {
            return fail(format!(
                "lock.max_permits ({}) must lie within [2, 1024]",
                lock.max_permits
            ));
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
        Ok(())
    }

    /// The `[server]` rules: TLS files and connection limits.
    fn validate_server(&self) -> Result<(), ConfigError> {
        let fail = |msg: String| Err(ConfigError(msg));
        let server = &self.server;
        if self.admin.allow_unauthenticated && !server.listen.ip().is_loopback() {
            return fail(format!(
                "admin.allow_unauthenticated is allowed only while server.listen is a loopback address (it is {})",
                server.listen
            ));
        }
        // The page shows every lock and election of the daemon: with no
        // tenants to ask for the `admin` scope, only on a loopback address
        // (docs/operations.md#status-page).
        let metrics = self.metrics.listen;
        if self.status_page.enabled && self.auth.tokens_file.is_none() && !metrics.ip().is_loopback() {
            return fail(format!(
                "status_page.enabled without auth.tokens_file is allowed only while metrics.listen is a loopback \
                 address (it is {metrics}): anyone who reaches it would see every lock; set auth.tokens_file (the \
                 page then asks for a tenant with scopes = [\"admin\"]) or listen on 127.0.0.1"
            ));
        }
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
        Ok(())
    }
}
