//! redlockd: a distributed-lock daemon. Redlock over N independent Redis
//! masters, with a fencing token that strictly increases per resource,
//! served over gRPC.
//!
//! - [`redlock`]: the quorum engine, pure of gRPC (rounds, tokens, nodes).
//! - [`server`]: the `redlockd.v1.Lock` gRPC service (translation only).
//! - [`validate`]: request-field checks; [`error`]: errors and status codes.
//! - [`config`]: typed, validated configuration.
//! - [`dev`]: local `redis-server` processes for `redlockd dev` and tests.
//! - [`logging`]: human or JSON log lines.
#![forbid(unsafe_code)]

pub mod config;
pub mod dev;
pub mod error;
pub mod logging;
pub mod redlock;
pub mod server;
pub mod validate;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use crate::config::Config;
use crate::redlock::redis::RedisNode;
use crate::redlock::{Engine, Node};
use crate::server::LockService;

/// The generated `redlockd.v1` messages, client and server.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("redlockd.v1");

    /// The encoded file descriptor set, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("redlockd_descriptor");
}

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
    /// The gRPC server failed.
    #[error("grpc server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serves the lock API on `listener` against the masters of `config` until
/// `shutdown` resolves. Tests bind `127.0.0.1:0` and pass a channel.
///
/// # Errors
/// When a node cannot be set up or the server fails.
pub async fn run(config: Config, listener: TcpListener, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
    let mut nodes = Vec::with_capacity(config.redis.nodes.len());
    for (index, url) in config.redis.nodes.iter().enumerate() {
        let node = RedisNode::connect(&config.node(url)).map_err(|reason| RunError::Node { index, reason })?;
        nodes.push(node);
    }
    let engine = Arc::new(Engine::new(nodes, config.engine()));
    tokio::spawn(log_connections(engine.clone(), config.redis.connect_timeout));

    let service = LockService::new(engine, (&config.lock).into(), config.redis.node_timeout);
    tracing::info!(listen = %listener.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string()), "serving redlockd.v1");
    tonic::transport::Server::builder()
        .add_service(proto::lock_server::LockServer::new(service))
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), shutdown)
        .await?;
    tracing::info!("stopped");
    Ok(())
}

/// Logs, once, whether each master came up within `limit`.
async fn log_connections(engine: Arc<Engine<RedisNode>>, limit: std::time::Duration) {
    for node in engine.nodes() {
        match node.wait_connected(limit).await {
            Ok(()) => tracing::info!(node = node.name(), "connected"),
            Err(error) => tracing::warn!(node = node.name(), %error, "not connected yet; retrying in the background"),
        }
    }
}
