//! Each layer's settings, made from the configuration: the engine's knobs,
//! the quarantine rules, how to reach a master, the gRPC server's limits,
//! and the log format. Only here does a layer's settings struct meet the
//! configuration schema.

use crate::api::serve;
use crate::config::{Config, LogFormat};
use crate::redis::connect::RedisNodeConfig;
use crate::redis::tls::Tls;
use crate::redlock::EngineConfig;
use crate::redlock::rules::Rules;
use crate::telemetry::{logging, traces};

// A token's low bits name the master that minted it: the configuration
// must allow no more masters than the algorithm can name.
const _: () = assert!(crate::config::MAX_NODES == crate::redlock::quorum::MAX_NODES);
// The rounds' spans are exported only if they carry the target the trace
// layer exports (docs/tracing.md).
const _: () = assert!(same(crate::telemetry::traces::TARGET, crate::redlock::spans::TARGET));

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The engine's part of the configuration.
pub fn engine(config: &Config) -> EngineConfig {
    EngineConfig {
        key_prefix: config.redis.key_prefix.clone(),
        node_timeout: config.redis.node_timeout,
        drift_factor: config.lock.drift_factor,
        min_validity: config.lock.min_validity,
        retry_delay_min: config.lock.retry_delay_min,
        retry_delay_max: config.lock.retry_delay_max,
        daemon_id: daemon_id(),
        publish_round: true,
    }
}

/// This daemon's name in holder records (docs/design.md#who-holds-it): the
/// host name (a pod's name under Kubernetes), `/`, and 6 random hex digits
/// that tell a restarted daemon from the one before.
fn daemon_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .take(64)
        .collect();
    let host = if host.is_empty() { "redlockd".to_owned() } else { host };
    format!("{host}/{:06x}", fastrand::u32(..0x100_0000))
}

/// The quarantine rules.
pub fn rules(config: &Config) -> Rules {
    Rules {
        quarantine: config.safety.quarantine,
        max_ttl: config.lock.max_ttl,
        clock_jump_bound: config.safety.clock_jump_bound,
    }
}

/// The connection settings of master `url`.
pub fn node(config: &Config, url: &str, tls: Option<Tls>) -> RedisNodeConfig {
    RedisNodeConfig {
        tls,
        url: url.to_owned(),
        key_prefix: config.redis.key_prefix.clone(),
        connect_timeout: config.redis.connect_timeout,
        command_timeout: config.redis.command_timeout,
        reconnect_min_delay: config.redis.reconnect_min_delay,
        reconnect_max_delay: config.redis.reconnect_max_delay,
        node_timeout: config.redis.node_timeout,
        // A waiting writer tries again within a retry delay plus an
        // attempt (at most two rounds): the mark outlives that gap.
        writer_wait: config.lock.retry_delay_max * 2 + config.redis.node_timeout * 4,
    }
}

/// The gRPC server's limits and TLS.
pub fn server(config: &Config) -> serve::Settings {
    serve::Settings {
        max_message_size: config.server.max_message_size,
        keepalive: config.server.keepalive,
        max_concurrent_streams: config.server.max_concurrent_streams,
        max_requests_per_connection: config.server.max_requests_per_connection,
        tls: config.files.server_tls.clone(),
    }
}

/// The log format.
pub fn log_format(config: &Config) -> logging::Format {
    match config.log.format {
        LogFormat::Human => logging::Format::Human,
        LogFormat::Json => logging::Format::Json,
    }
}

/// Where traces go, when `telemetry.otlp.endpoint` (or the standard
/// variables) named a collector.
pub fn traces(config: &Config) -> Option<traces::Settings> {
    let otlp = &config.telemetry.otlp;
    Some(traces::Settings {
        endpoint: otlp.endpoint.clone()?,
        sample_ratio: otlp.sample_ratio,
        timeout: otlp.timeout,
    })
}
