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

/// Builds the connector for `rediss://` masters from PEM: `ca_pem` (the
/// roots to trust; `None` = the system's) and `client` (certificate chain
/// and key).
///
/// # Errors
/// A message saying which part could not be used.
pub fn connector(ca_pem: Option<&[u8]>, client: Option<(&[u8], &[u8])>) -> Result<Tls, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| format!("CA: {e}"))?;
                roots.add(cert).map_err(|e| format!("CA: {e}"))?;
            }
        }
        None => roots = system_roots()?,
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("client certificate: {e}"))?;
            let key_der = PrivateKeyDer::from_pem_slice(key).map_err(|e| format!("client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(TlsConnector::from(config))
}

/// The system's trusted roots, as fred would load them.
fn system_roots() -> Result<rustls::RootCertStore, String> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err(format!("no system root certificates found: {:?}", found.errors));
    }
    Ok(roots)
}
