//! The files the configuration names, read once at load into ready values:
//! the gRPC listener's certificate, key and client CA, the certificates for
//! `rediss://` masters, and the tenants file. Each is checked here, so a
//! bad file stops the daemon at start (exit 64) with the setting's name,
//! not at the first connection; nothing reads them again.

use std::fmt;
use std::path::Path;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::tenants::{self, TenantSpec};
use super::{Config, ConfigError};

/// What the configured files hold.
#[derive(Clone, Default)]
pub struct Files {
    /// `server.tls_*`: TLS (and mutual TLS) on the gRPC listener.
    pub server_tls: Option<ServerTls>,
    /// `redis.tls_*`: for `rediss://` masters; `None` = the system's roots
    /// and no client certificate.
    pub redis_tls: Option<RedisTls>,
    /// `auth.tokens_file`: the tenants; `None` = authentication off.
    pub tenants: Option<Vec<TenantSpec>>,
}

/// The gRPC listener's PEM files.
#[derive(Clone)]
pub struct ServerTls {
    /// Certificate chain.
    pub cert_pem: Vec<u8>,
    /// Private key.
    pub key_pem: Vec<u8>,
    /// CA of the client certificates (mutual TLS), when set.
    pub client_ca_pem: Option<Vec<u8>>,
}

/// The PEM files for `rediss://` masters.
#[derive(Clone)]
pub struct RedisTls {
    /// Roots to trust instead of the system's.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate chain and key, for `tls-auth-clients yes`.
    pub client: Option<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for Files {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys and tokens stay out of any log line.
        f.debug_struct("Files")
            .field("server_tls", &self.server_tls.is_some())
            .field("redis_tls", &self.redis_tls.is_some())
            .field("tenants", &self.tenants.as_ref().map(Vec::len))
            .finish()
    }
}

impl Files {
    /// Reads and checks every file `config` names (`token_env` entries of
    /// the tenants file are looked up with `env`).
    ///
    /// # Errors
    /// A message naming the setting and the file.
    pub(super) fn read(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Result<Files, ConfigError> {
        Ok(Files {
            server_tls: server_tls(config)?,
            redis_tls: redis_tls(config)?,
            tenants: match &config.auth.tokens_file {
                None => None,
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| ConfigError(format!("auth.tokens_file ({}): {e}", path.display())))?;
                    let specs = tenants::parse(&text, env)
                        .map_err(|e| ConfigError(format!("auth.tokens_file ({}): {e}", path.display())))?;
                    Some(specs)
                }
            },
        })
    }
}

fn server_tls(config: &Config) -> Result<Option<ServerTls>, ConfigError> {
    let server = &config.server;
    let (Some(cert), Some(key)) = (&server.tls_cert_file, &server.tls_key_file) else {
        return Ok(None);
    };
    let cert_pem = certificates("server.tls_cert_file", cert)?;
    let key_pem = private_key("server.tls_key_file", key)?;
    let client_ca_pem = match &server.tls_client_ca_file {
        Some(ca) => Some(certificates("server.tls_client_ca_file", ca)?),
        None => None,
    };
    Ok(Some(ServerTls {
        cert_pem,
        key_pem,
        client_ca_pem,
    }))
}

fn redis_tls(config: &Config) -> Result<Option<RedisTls>, ConfigError> {
    let redis = &config.redis;
    if redis.tls_ca_file.is_none() && redis.tls_cert_file.is_none() {
        return Ok(None);
    }
    let ca_pem = match &redis.tls_ca_file {
        Some(ca) => Some(certificates("redis.tls_ca_file", ca)?),
        None => None,
    };
    let client = match (&redis.tls_cert_file, &redis.tls_key_file) {
        (Some(cert), Some(key)) => Some((
            certificates("redis.tls_cert_file", cert)?,
            private_key("redis.tls_key_file", key)?,
        )),
        _ => None,
    };
    Ok(Some(RedisTls { ca_pem, client }))
}

fn read(name: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| ConfigError(format!("{name} ({}): {e}", path.display())))
}

/// The file of setting `name`, which must hold at least one PEM certificate.
fn certificates(name: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    let pem = read(name, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError(format!("{name} ({}): {e}", path.display())))?;
    if certs.is_empty() {
        return Err(ConfigError(format!(
            "{name} ({}): no PEM certificate in it",
            path.display()
        )));
    }
    Ok(pem)
}

/// The file of setting `name`, which must hold a PEM private key.
fn private_key(name: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    let pem = read(name, path)?;
    PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| ConfigError(format!("{name} ({}): no PEM private key: {e}", path.display())))?;
    Ok(pem)
}
