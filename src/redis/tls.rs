//! TLS to the Redis masters (`rediss://` URLs): the roots to trust (the
//! system's, or a CA) and an optional client certificate for masters
//! started with `tls-auth-clients yes`. The PEM files were read and checked
//! by the configuration; this builds the connector from them.

use std::sync::Arc;

use fred::types::config::TlsConnector;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// TLS settings for `rediss://` masters, ready for `RedisNodeConfig`.
pub type Tls = TlsConnector;

/// Which part of the TLS material for `rediss://` masters could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The CA bundle does not read as PEM certificates.
    #[error("CA: {0}")]
    CaPem(rustls_pki_types::pem::Error),
    /// A certificate of the CA bundle cannot be a root.
    #[error("CA: {0}")]
    CaRoot(rustls::Error),
    /// No CA bundle is given and the system has no roots.
    #[error("no system root certificates found: {errors:?}")]
    NoSystemRoots {
        /// What went wrong looking for them.
        errors: Vec<rustls_native_certs::Error>,
    },
    /// rustls refused its own default protocol versions.
    #[error("{0}")]
    Protocols(rustls::Error),
    /// The client certificate chain does not read as PEM.
    #[error("client certificate: {0}")]
    ClientChainPem(rustls_pki_types::pem::Error),
    /// The client key does not read as a PEM private key.
    #[error("client key: {0}")]
    ClientKeyPem(rustls_pki_types::pem::Error),
    /// The client certificate and key cannot be used together.
    #[error("client certificate: {0}")]
    ClientCert(rustls::Error),
}

/// Builds the connector for `rediss://` masters from PEM: `ca_pem` (the
/// roots to trust; `None` = the system's) and `client` (certificate chain
/// and key).
///
/// # Errors
/// Which part could not be used.
pub fn connector(ca_pem: Option<&[u8]>, client: Option<(&[u8], &[u8])>) -> Result<Tls, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(TlsError::CaPem)?;
                roots.add(cert).map_err(TlsError::CaRoot)?;
            }
        }
        None => roots = system_roots()?,
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Protocols)?
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(TlsError::ClientChainPem)?;
            let key_der = PrivateKeyDer::from_pem_slice(key).map_err(TlsError::ClientKeyPem)?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(TlsError::ClientCert)?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(TlsConnector::from(config))
}

/// The system's trusted roots, as fred would load them.
fn system_roots() -> Result<rustls::RootCertStore, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err(TlsError::NoSystemRoots { errors: found.errors });
    }
    Ok(roots)
}
