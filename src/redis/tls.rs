//! TLS to the Redis masters (`rediss://` URLs): the roots to trust (the
//! system's, or a CA file) and an optional client certificate for masters
//! started with `tls-auth-clients yes`.

use std::path::Path;
use std::sync::Arc;

use fred::types::config::TlsConnector;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Builds the connector for `rediss://` masters; `None` keeps fred's default
/// (the system's roots, no client certificate).
///
/// # Errors
/// A message naming the file that could not be read or used.
pub fn connector(
    ca_file: Option<&Path>,
    cert_file: Option<&Path>,
    key_file: Option<&Path>,
) -> Result<Option<TlsConnector>, String> {
    if ca_file.is_none() && cert_file.is_none() {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| format!("{}: {e}", path.display()))? {
                let cert = cert.map_err(|e| format!("{}: {e}", path.display()))?;
                roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        None => roots = system_roots()?,
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match (cert_file, key_file) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("{}: {e}", cert.display()))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("tls_cert_file and tls_key_file must be given together".into()),
    };
    Ok(Some(TlsConnector::from(config)))
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
