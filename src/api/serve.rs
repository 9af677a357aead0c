//! The gRPC server around the service: TLS, HTTP/2 keepalive and limits,
//! `grpc.health.v1`, server reflection, the HTTP/JSON routes beside them
//! (docs/http.md), and a graceful stop.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;

use super::admin::AdminService;
use super::auth::{Auth, Authenticate};
use super::election::ElectionService;
use super::health::Health;
use super::http;
use super::proto;
use super::service::LockService;
use super::tls;
use crate::config::ServerTls;
use crate::redlock::Node;

/// The largest HTTP/2 header list a client may send, in bytes.
const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;
/// Replies (an Inspect of 15 masters) stay far below this.
const MIN_REPLY_LIMIT: usize = 64 * 1024;

/// How the server treats connections (from `[server]`).
pub struct Settings {
    /// The largest request message, in bytes.
    pub max_message_size: usize,
    /// HTTP/2 pings and TCP keepalive: a client host gone silent is noticed
    /// within about twice this.
    pub keepalive: Duration,
    /// Streams at once per connection.
    pub max_concurrent_streams: u32,
    /// Requests at once per connection.
    pub max_requests_per_connection: usize,
    /// TLS (and mutual TLS when a client CA is given); `None` = plaintext.
    pub tls: Option<ServerTls>,
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The reflection service could not be built from the descriptors.
    #[error("server reflection: {0}")]
    Reflection(String),
    /// The gRPC server failed.
    #[error("grpc server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The TLS settings could not be used.
    #[error("{0}")]
    Tls(#[from] tls::ServerTlsError),
}

/// The services the daemon serves over gRPC.
pub(crate) struct Services<N> {
    /// `redlockd.v1.Lock`.
    pub lock: LockService<N>,
    /// `redlockd.v1.Admin`.
    pub admin: AdminService<N>,
    /// `redlockd.v1.Election`.
    pub election: ElectionService<N>,
}

/// Serves the services (behind `auth`), `health` and reflection on `listener` until `stop`
/// resolves; then the server stops taking streams, and this resolves once
/// the open ones have ended (the caller bounds that wait).
///
/// # Errors
/// When reflection cannot be built or the server fails.
pub(crate) async fn serve<N: Node>(
    listener: TcpListener,
    Services {
        lock: service,
        admin,
        election,
    }: Services<N>,
    auth: Arc<Auth>,
    health: &Health,
    settings: Settings,
    stop: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    // Reflection in both versions: grpcurl and grpcui speak v1; Python's
    // grpcio-reflection, Postman and older grpcurl speak only v1alpha.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection()
        .build_v1()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;
    let max_message = settings.max_message_size;
    // One copy of each service, shared by its gRPC server and the HTTP routes.
    let (service, admin, election) = (Arc::new(service), Arc::new(admin), Arc::new(election));
    let http_routes = http::router(http::Http {
        lock: service.clone(),
        admin: admin.clone(),
        election: election.clone(),
        auth: auth.clone(),
    });
    let lock_server = proto::lock_server::LockServer::from_arc(service)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message.max(MIN_REPLY_LIMIT));
    // Every call is authenticated once, before the service sees it.
    let lock_server = InterceptedService::new(lock_server, Authenticate(auth.clone()));
    let admin_server = InterceptedService::new(
        proto::admin_server::AdminServer::from_arc(admin),
        Authenticate(auth.clone()),
    );
    // A leader's value may be 4 KiB (request::MAX_ELECTION_VALUE_BYTES).
    let election_server = proto::election_server::ElectionServer::from_arc(election)
        .max_decoding_message_size(max_message + super::request::MAX_ELECTION_VALUE_BYTES)
        .max_encoding_message_size(max_message.max(MIN_REPLY_LIMIT));
    let election_server = InterceptedService::new(election_server, Authenticate(auth));
    // gRPC services by their paths, everything else to the HTTP routes
    // (docs/http.md): the same listener, TLS and keepalive.
    let routes = Routes::from(http_routes)
        .add_service(lock_server)
        .add_service(admin_server)
        .add_service(election_server)
        .add_service(health.service())
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    tracing::info!(
        listen = %listener.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string()),
        tls = settings.tls.is_some(),
        mutual_tls = settings.tls.as_ref().is_some_and(|tls| tls.client_ca_pem.is_some()),
        "serving redlockd.v1"
    );
    // A client host that vanishes sends no FIN: HTTP/2 pings (and TCP
    // keepalive) notice, so its sessions and waits end and locks are freed.
    let keepalive = Some(settings.keepalive);
    let incoming = TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(keepalive)
        .with_keepalive_interval(keepalive);
    // TLS by this crate's acceptor (ALPN h2 and http/1.1), not tonic's (h2 only).
    let tls = settings
        .tls
        .as_ref()
        .map(tls::server_config)
        .transpose()
        .map_err(ServeError::Tls)?;
    let router = tonic::transport::Server::builder()
        .http2_keepalive_interval(keepalive)
        .http2_keepalive_timeout(keepalive)
        .max_concurrent_streams(Some(settings.max_concurrent_streams))
        .concurrency_limit_per_connection(settings.max_requests_per_connection)
        // Metadata (a bearer token included) fits in far less.
        .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
        // A span per call when traces are exported (docs/tracing.md).
        .layer(super::traced::TraceCalls)
        // HTTP/1.1 (and 1.0) for the HTTP routes; gRPC stays on HTTP/2.
        .accept_http1(true)
        .add_routes(routes);
    match tls {
        Some(config) => {
            let incoming = tls::TlsIncoming::new(incoming, config);
            router.serve_with_incoming_shutdown(incoming, stop).await?;
        }
        None => router.serve_with_incoming_shutdown(incoming, stop).await?,
    }
    Ok(())
}
