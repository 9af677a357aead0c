//! TLS on the listener, done here rather than by tonic's server TLS so that
//! ALPN offers `http/1.1` beside `h2` (docs/http.md#tls): tonic's offers `h2`
//! alone, and a client offering only `http/1.1` (Python's requests, urllib3)
//! was refused in the handshake. Otherwise as tonic's: the same rustls
//! settings (ring), the client CA required when given (mutual TLS), a
//! handshake timeout, and `tokio_rustls` streams, for which tonic puts the
//! peer's certificates in each request (`api::peer`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use rustls::RootCertStore;
use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tonic::transport::server::TcpIncoming;

use crate::config::ServerTls;

/// A client that has not finished its TLS handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which of the listener's TLS settings could not be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum ServerTlsError {
    /// rustls refused its own default protocol versions.
    #[error("server TLS: {0}")]
    Protocols(rustls::Error),
    /// `server.tls_client_ca` does not read as PEM certificates.
    #[error("server.tls_client_ca: {0}")]
    ClientCaPem(rustls_pki_types::pem::Error),
    /// A certificate of `server.tls_client_ca` cannot be a root.
    #[error("server.tls_client_ca: {0}")]
    ClientCaRoot(rustls::Error),
    /// No client certificate could be verified against `server.tls_client_ca`.
    #[error("server.tls_client_ca: {0}")]
    ClientVerifier(rustls::server::VerifierBuilderError),
    /// `server.tls_cert` does not read as PEM certificates.
    #[error("server.tls_cert: {0}")]
    CertPem(rustls_pki_types::pem::Error),
    /// `server.tls_key` does not read as a PEM private key.
    #[error("server.tls_key: {0}")]
    KeyPem(rustls_pki_types::pem::Error),
    /// The certificate and the key do not go together.
    #[error("server.tls_cert and server.tls_key: {0}")]
    CertAndKey(rustls::Error),
}

/// The server's TLS settings from the PEM files the configuration read.
///
/// # Errors
/// The setting whose PEM could not be used.
pub(crate) fn server_config(tls: &ServerTls) -> Result<Arc<ServerConfig>, ServerTlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(ServerTlsError::Protocols)?;
    let builder = match &tls.client_ca_pem {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca) {
                let cert = cert.map_err(ServerTlsError::ClientCaPem)?;
                roots.add(cert).map_err(ServerTlsError::ClientCaRoot)?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(ServerTlsError::ClientVerifier)?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let chain = CertificateDer::pem_slice_iter(&tls.cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(ServerTlsError::CertPem)?;
    let key = PrivateKeyDer::from_pem_slice(&tls.key_pem).map_err(ServerTlsError::KeyPem)?;
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(ServerTlsError::CertAndKey)?;
    // h2 first: gRPC clients and browsers take it; HTTP/1.1 clients get theirs.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// One connection's handshake: its stream, or `None` when it failed.
type Handshake = Pin<Box<dyn Future<Output = Option<TlsStream<TcpStream>>> + Send>>;

/// The connections of `tcp`, each once its handshake is done; handshakes run
/// side by side, so a slow one holds up no other connection.
pub(crate) struct TlsIncoming {
    tcp: Option<TcpIncoming>,
    acceptor: TlsAcceptor,
    handshakes: FuturesUnordered<Handshake>,
}

impl TlsIncoming {
    /// TLS with `config` over the connections of `tcp`.
    pub(crate) fn new(tcp: TcpIncoming, config: Arc<ServerConfig>) -> TlsIncoming {
        TlsIncoming {
            tcp: Some(tcp),
            acceptor: TlsAcceptor::from(config),
            handshakes: FuturesUnordered::new(),
        }
    }
}

impl Stream for TlsIncoming {
    type Item = Result<TlsStream<TcpStream>, std::io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        while let Some(tcp) = &mut this.tcp {
            match tcp.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(stream))) => {
                    let accept = this.acceptor.accept(stream);
                    this.handshakes.push(Box::pin(async move {
                        match tokio::time::timeout(HANDSHAKE_TIMEOUT, accept).await {
                            Ok(Ok(tls)) => Some(tls),
                            Ok(Err(e)) => {
                                tracing::debug!(error = %e, "TLS handshake failed");
                                None
                            }
                            Err(_) => {
                                tracing::debug!("TLS handshake timed out");
                                None
                            }
                        }
                    }));
                }
                // As without TLS: tonic decides what an accept error means.
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => this.tcp = None,
                Poll::Pending => break,
            }
        }
        loop {
            match this.handshakes.poll_next_unpin(cx) {
                Poll::Ready(Some(Some(tls))) => return Poll::Ready(Some(Ok(tls))),
                Poll::Ready(Some(None)) => {}
                Poll::Ready(None) if this.tcp.is_none() => return Poll::Ready(None),
                Poll::Ready(None) | Poll::Pending => return Poll::Pending,
            }
        }
    }
}
