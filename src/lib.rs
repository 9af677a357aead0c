//! redlockd: a distributed-lock daemon. Redlock over N independent Redis
//! masters, with a fencing token that strictly increases per resource,
//! served over gRPC.
//!
//! - [`redlock`]: the quorum engine, pure of gRPC (rounds, tokens, nodes).
//! - [`server`]: the `redlockd.v1.Lock` gRPC service (translation only).
//! - [`validate`]: request-field checks; [`error`]: errors and status codes.
//! - [`config`]: typed, validated configuration.
//! - [`dev`]: local `redis-server` processes for `redlockd dev` and tests.
//! - [`logging`]: human or JSON log lines; [`metrics`]: Prometheus.
#![forbid(unsafe_code)]

pub mod api;
pub mod client;
pub mod config;
pub mod dev;
pub mod locks;
pub mod redis;
pub mod redlock;
pub mod telemetry;

use std::future::Future;

use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use crate::api::health::Health;
pub use crate::api::health::SERVICE_NAME;
use crate::api::service::LockService;
use crate::config::Config;
use crate::locks::Locks;
use crate::locks::queue::Waiters;
use crate::redis::node::RedisNode;
use crate::redlock::monitor::Monitor;
use crate::redlock::{Engine, Node};
use crate::telemetry::metrics::Metrics;

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A master could not be set up (bad URL).
    #[error("redis node {index}: {reason}")]
    Node {
        /// Its index in `redis.nodes`.
        index: usize,
        /// What went wrong.
        reason: String,
    },
    /// The TLS files for `rediss://` masters could not be used.
    #[error("{0}")]
    Tls(String),
    /// The tenants file could not be used.
    #[error("{0}")]
    Auth(String),
    /// The reflection service could not be built from the descriptors.
    #[error("server reflection: {0}")]
    Reflection(String),
    /// The gRPC server failed.
    #[error("grpc server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// The largest HTTP/2 header list a client may send, in bytes.
const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;
/// Replies (an Inspect of 15 masters) stay far below this.
const MIN_REPLY_LIMIT: usize = 64 * 1024;

/// The sockets the daemon serves on, bound by the caller (tests bind
/// `127.0.0.1:0`).
pub struct Listeners {
    /// The gRPC API.
    pub grpc: TcpListener,
    /// `/metrics` for Prometheus.
    pub metrics: TcpListener,
}

/// Serves the lock API and metrics on `listeners` against the masters of
/// `config` until `shutdown` resolves.
///
/// # Errors
/// When a node cannot be set up or the server fails.
pub async fn run(
    config: Config,
    listeners: Listeners,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RunError> {
    let tls = config.redis_tls().map_err(|e| RunError::Tls(e.to_string()))?;
    let server_tls = config.server_tls().map_err(|e| RunError::Tls(e.to_string()))?;
    let auth = Arc::new(config.auth().map_err(|e| RunError::Auth(e.to_string()))?);
    if auth.is_on() {
        tracing::info!(tenants = auth.tenants(), "bearer tokens required on redlockd.v1.Lock");
    }
    let mut nodes = Vec::with_capacity(config.redis.nodes.len());
    for (index, url) in config.redis.nodes.iter().enumerate() {
        let node = RedisNode::connect(&config.node(url, tls.clone()))
            .map_err(|reason| RunError::Node { index, reason })?
            .observed(metrics.clone(), index);
        nodes.push(node);
    }
    let engine = Arc::new(Engine::new(nodes, config.engine()));
    // Serve once the masters are connected, or connect_timeout has passed
    // (those still down are retried in the background).
    wait_for_connections(&engine, config.redis.connect_timeout).await;
    if !config.safety.quarantine {
        tracing::warn!(
            "safety.quarantine is off: a master that restarts without its data can grant a lock twice; \
             only safe with appendfsync always on every master"
        );
    }
    // Judge every master once before serving, then keep watching.
    let monitor = Monitor::new(
        engine.clone(),
        metrics.clone(),
        config.rules(),
        config.safety.check_interval,
        config.redis.command_timeout,
    );
    monitor.check_all().await;
    let (health, health_service) = Health::new();
    let (stop_background, background_stopped) = tokio::sync::watch::channel(());
    let stopped = move || {
        let mut rx = background_stopped.clone();
        async move {
            let _ = rx.changed().await;
        }
    };
    let reporting = tokio::spawn(health.clone().follow(monitor.usable(), engine.quorum(), stopped()));
    let monitoring = tokio::spawn(monitor.run(stopped()));
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(api::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| RunError::Reflection(e.to_string()))?;

    // Releases published on any master wake this daemon's waiters.
    let waiters = Arc::new(
        Waiters::new(config.lock.max_waiters_per_resource, config.lock.max_waiters)
            .with_handoffs(config.lock.max_handoffs_in_row, config.redis.node_timeout),
    );
    let mut subscribers = Vec::new();
    for (index, url) in config.redis.nodes.iter().enumerate() {
        let subscriber = redis::subscriber::subscribe(&config.node(url, tls.clone()), waiters.clone())
            .map_err(|reason| RunError::Node { index, reason })?;
        subscribers.push(subscriber);
    }
    let locks = Arc::new(Locks::new(
        engine.clone(),
        waiters,
        config.lock.max_sessions,
        metrics.clone(),
    ));
    let exporting = {
        let locks = locks.clone();
        let refresh = move || locks.refresh_gauges();
        tokio::spawn(telemetry::exporter::serve(
            listeners.metrics,
            metrics.clone(),
            refresh,
            stopped(),
        ))
    };
    let service = LockService::new(locks.clone(), auth, (&config.lock).into(), config.redis.node_timeout)
        .with_pipeline_limit(config.server.max_requests_per_connection);
    let max_message = config.server.max_message_size;
    let lock_server = api::proto::lock_server::LockServer::new(service)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message.max(MIN_REPLY_LIMIT));
    let listener = listeners.grpc;
    tracing::info!(
        listen = %listener.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string()),
        tls = server_tls.is_some(),
        mutual_tls = config.server.tls_client_ca_file.is_some(),
        "serving redlockd.v1"
    );
    let stopping = tokio::sync::Notify::new();
    let grace_ends = std::sync::Mutex::new(None);
    // A client host that vanishes sends no FIN: HTTP/2 pings (and TCP
    // keepalive) notice, so its sessions and waits end and locks are freed.
    let keepalive = Some(config.server.keepalive);
    let incoming = TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(keepalive)
        .with_keepalive_interval(keepalive);
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = server_tls {
        builder = builder.tls_config(tls)?;
    }
    let server = builder
        .http2_keepalive_interval(keepalive)
        .http2_keepalive_timeout(keepalive)
        .max_concurrent_streams(Some(config.server.max_concurrent_streams))
        .concurrency_limit_per_connection(config.server.max_requests_per_connection)
        // Metadata (a bearer token included) fits in far less.
        .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
        .add_service(lock_server)
        .add_service(health_service)
        .add_service(reflection)
        .serve_with_incoming_shutdown(incoming, async {
            shutdown.await;
            // Probes see NOT_SERVING at once: no new traffic is sent here.
            health.shut_down().await;
            // One grace period for everything: sessions release their locks
            // first (and say RELEASED), then connections drain.
            let ends = tokio::time::Instant::now() + config.server.shutdown_grace;
            *grace_ends.lock().unwrap_or_else(|e| e.into_inner()) = Some(ends);
            locks.close_sessions(config.server.shutdown_grace).await;
            stopping.notify_one();
        });
    // Connections get `shutdown_grace` to finish; clients that keep an idle
    // connection open must not hold the daemon up past the pod's grace.
    let grace = async {
        stopping.notified().await;
        let ends = *grace_ends.lock().unwrap_or_else(|e| e.into_inner());
        tokio::time::sleep_until(ends.unwrap_or_else(tokio::time::Instant::now)).await;
    };
    tokio::select! {
        served = server => served?,
        () = grace => tracing::warn!("shutdown grace period over; closing the remaining connections"),
    }
    // A release is answered at quorum: its deletes on the slower masters
    // may still be on their way. They get what is left of the grace period.
    let ends = grace_ends
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_else(tokio::time::Instant::now);
    let settled = futures::future::join_all(engine.nodes().iter().map(RedisNode::settled));
    if tokio::time::timeout_at(ends, settled).await.is_err() {
        tracing::warn!("shutdown grace period over with requests to some masters still unanswered");
    }
    drop(stop_background);
    let _ = reporting.await;
    for subscriber in subscribers {
        let _ = fred::prelude::ClientLike::quit(&subscriber).await;
    }
    let _ = monitoring.await;
    let _ = exporting.await;
    tracing::info!("stopped");
    Ok(())
}

/// Waits (at most `limit`) for every master's first connection, logging
/// each outcome.
async fn wait_for_connections(engine: &Engine<RedisNode>, limit: std::time::Duration) {
    let waits = engine.nodes().iter().map(|node| async move {
        match node.wait_connected(limit).await {
            Ok(()) => tracing::info!(node = node.name(), "connected"),
            Err(error) => tracing::warn!(node = node.name(), %error, "not connected yet; retrying in the background"),
        }
    });
    futures::future::join_all(waits).await;
}
