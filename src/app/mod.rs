//! The composition root: from a loaded configuration to a serving daemon.
//! `prepare` turns the configuration's ready values into what each layer
//! needs (`settings`; before any port is bound, so a bad setting exits 64);
//! `run` connects the masters, builds the engine, the monitor, the local
//! lock semantics and the API, hands the metrics to the algorithm as its
//! observer (`observe`), serves, and stops them in order (`shutdown`,
//! docs/operations.md#shutdown).

mod observe;
pub mod settings;
mod shutdown;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

use self::shutdown::Shutdown;
use crate::api::admin::AdminService;
use crate::api::auth::Auth;
use crate::api::election::ElectionService;
use crate::api::health::Health;
use crate::api::request::Limits;
use crate::api::serve::{self, ServeError};
use crate::api::service::LockService;
use crate::api::status_page;
use crate::config::{Config, ConfigError};
use crate::locks::Locks;
use crate::locks::follow::Followed;
use crate::locks::queue::Waiters;
use crate::redis::connect::{ConnectError, check_urls};
use crate::redis::node::RedisNode;
use crate::redis::subscriber::{self, Heard};
use crate::redis::tls::{self, Tls};
use crate::redlock::monitor::Monitor;
use crate::redlock::{Engine, Node};
use crate::telemetry::logging::LoggingError;
use crate::telemetry::traces::Traces;
use crate::telemetry::{exporter, logging, metrics::Metrics};

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The configuration cannot be used (see `prepare`).
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A master could not be set up.
    #[error("redis node {index}: {reason}")]
    Node {
        /// Its index in `redis.nodes`.
        index: usize,
        /// What went wrong.
        reason: ConnectError,
    },
    /// The gRPC server failed.
    #[error("{0}")]
    Serve(#[from] ServeError),
}

/// The sockets the daemon serves on, bound by the caller (tests bind
/// `127.0.0.1:0`).
pub struct Listeners {
    /// The gRPC API.
    pub grpc: TcpListener,
    /// `/metrics` for Prometheus.
    pub metrics: TcpListener,
}

/// A configuration made ready for `run`: the tenants as the API's `Auth`,
/// the `rediss://` TLS connector, every master URL checked.
pub struct Prepared {
    config: Config,
    auth: Arc<Auth>,
    redis_tls: Option<Tls>,
}

impl Prepared {
    /// The configuration it was made from.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// Makes `config` ready to run, from the values it read once.
///
/// # Errors
/// A setting that cannot be used, named.
pub fn prepare(config: Config) -> Result<Prepared, ConfigError> {
    check_urls(&config.redis.nodes).map_err(|e| ConfigError(e.to_string()))?;
    let redis_tls = match &config.files.redis_tls {
        None => None,
        Some(files) => {
            let client = files
                .client
                .as_ref()
                .map(|(cert, key)| (cert.as_slice(), key.as_slice()));
            let connector =
                tls::connector(files.ca_pem.as_deref(), client).map_err(|e| ConfigError(format!("redis TLS: {e}")))?;
            Some(connector)
        }
    };
    let auth = match &config.files.tenants {
        None => Auth::off(),
        Some(tenants) => Auth::new(tenants.clone()),
    };
    Ok(Prepared {
        config,
        auth: Arc::new(auth),
        redis_tls,
    })
}

/// Installs the log subscriber `config` asks for, and the trace exporter
/// when `telemetry.otlp.endpoint` is set (then within the async runtime);
/// the exporter is to be shut down on exit (`Traces::shutdown`).
///
/// # Errors
/// When `log.filter` does not parse or the exporter cannot be built.
pub fn init_logging(config: &Config) -> Result<Option<Traces>, LoggingError> {
    let traces = settings::traces(config);
    logging::init(settings::log_format(config), &config.log.filter, traces.as_ref())
}

/// Serves the lock API and metrics on `listeners` against the masters of
/// `prepared` until `shutdown` resolves, then stops in order within
/// `server.shutdown_grace`.
///
/// # Errors
/// When a node cannot be set up or the server fails.
pub async fn run(
    prepared: Prepared,
    listeners: Listeners,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RunError> {
    let Prepared {
        config,
        auth,
        redis_tls,
    } = prepared;
    if auth.is_on() {
        tracing::info!(tenants = auth.tenants(), "bearer tokens required on redlockd.v1.Lock");
    }
    metrics.nodes(config.redis.nodes.len());
    let mut nodes = Vec::with_capacity(config.redis.nodes.len());
    for (index, url) in config.redis.nodes.iter().enumerate() {
        let node = RedisNode::connect(&settings::node(&config, url, redis_tls.clone()))
            .map_err(|reason| RunError::Node { index, reason })?
            .observed(metrics.clone(), index);
        nodes.push(node);
    }
    let engine = Arc::new(Engine::new(nodes, settings::engine(&config)));
    tracing::info!(daemon = engine.daemon_id(), "this daemon's name in holder records");
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
        settings::rules(&config),
        config.safety.check_interval,
        config.redis.command_timeout,
    );
    monitor.check_all().await;
    let stop = Shutdown::new(config.server.shutdown_grace);
    let health = Health::new();
    let reporting = tokio::spawn(
        health
            .clone()
            .follow(monitor.usable(), engine.quorum(), stop.background_stopped()),
    );
    let monitoring = tokio::spawn(monitor.run(stop.background_stopped()));

    // Releases published on any master wake this daemon's waiters.
    let waiters = Arc::new(
        Waiters::new(config.lock.max_waiters_per_resource, config.lock.max_waiters)
            .with_handoffs(config.lock.max_handoffs_in_row, config.redis.node_timeout),
    );
    // Observers and watchers hear of the same announcements (docs/design.md#observe-and-watch).
    let followed = Arc::new(Followed::new(config.lock.watch_period, config.lock.max_ttl));
    let on_release: subscriber::OnRelease = {
        let (waiters, followed) = (waiters.clone(), followed.clone());
        Arc::new(move |heard: Heard<'_>| match heard {
            Heard::Released(name) => {
                waiters.released(name);
                followed.changed(Some(name));
            }
            Heard::Missed => {
                waiters.released_all();
                followed.changed(None);
            }
        })
    };
    let mut subscribers = Vec::new();
    for (index, url) in config.redis.nodes.iter().enumerate() {
        let subscriber = subscriber::subscribe(&settings::node(&config, url, redis_tls.clone()), on_release.clone())
            .map_err(|reason| RunError::Node { index, reason })?;
        subscribers.push(subscriber);
    }
    // A bucket's releases are heard only while this daemon has waiters in it.
    let interest = Arc::new(subscriber::Interest::new(&config.redis.key_prefix, subscribers));
    {
        let interest = interest.clone();
        waiters.on_interest(Box::new(move |name, waiting| interest.changed(name, waiting)));
    }
    {
        let interest = interest.clone();
        followed.on_interest(Box::new(move |name, following| interest.changed(name, following)));
    }
    let locks = Arc::new(Locks::new(
        engine.clone(),
        waiters,
        config.lock.max_sessions,
        metrics.clone(),
        followed,
    ));
    // The read-only status page beside /metrics (docs/operations.md#status-page).
    let pages = config.status_page.enabled.then(|| {
        if let Ok(address) = listeners.metrics.local_addr() {
            tracing::info!(%address, "status page at /status on the metrics listener");
        }
        status_page::pages(engine.clone(), locks.clone(), auth.clone(), metrics.clone())
    });
    let exporting = {
        let locks = locks.clone();
        let refresh = move || locks.refresh_gauges();
        tokio::spawn(exporter::serve(
            listeners.metrics,
            metrics.clone(),
            refresh,
            pages,
            stop.background_stopped(),
        ))
    };
    let limits = Limits::from(&config.lock);
    let service = LockService::new(locks.clone(), limits.clone(), config.redis.node_timeout)
        .with_pipeline_limit(config.server.max_requests_per_connection);
    let admin = AdminService::new(locks.clone(), auth.is_on(), config.admin.allow_unauthenticated);
    let election = ElectionService::new(locks.clone(), limits.clone());
    let server = serve::serve(
        listeners.grpc,
        serve::Services {
            lock: service,
            admin,
            election,
        },
        auth,
        &health,
        settings::server(&config),
        async {
            shutdown.await;
            // Probes see NOT_SERVING at once: no new traffic is sent here.
            health.shut_down().await;
            // One grace period for everything: sessions release their locks
            // first (and say RELEASED), then connections drain.
            stop.begin();
            locks.close_sessions(stop.grace()).await;
            stop.sessions_released();
        },
    );
    // Connections get what is left of the grace period to finish; clients
    // that keep an idle connection open must not hold the daemon up past
    // the pod's grace.
    tokio::select! {
        served = server => served?,
        () = stop.grace_over() => tracing::warn!("shutdown grace period over; closing the remaining connections"),
    }
    // A release is answered at quorum: its deletes on the slower masters
    // may still be on their way. They get what is left of the grace period.
    let settled = futures::future::join_all(engine.nodes().iter().map(RedisNode::settled));
    if tokio::time::timeout_at(stop.deadline(), settled).await.is_err() {
        tracing::warn!("shutdown grace period over with requests to some masters still unanswered");
    }
    stop.stop_background();
    let _ = reporting.await;
    interest.quit().await;
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
