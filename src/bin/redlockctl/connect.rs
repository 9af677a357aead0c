//! The connection to the daemon: plain or TLS (with a client certificate
//! for mutual TLS), and the bearer token on every call, through the client
//! library.

use std::path::PathBuf;

use redlockd_client::{Options as ClientOptions, Tls};

/// How to reach and authenticate to the daemon (the environment variables
/// are the ones every redlockd client reads).
#[derive(clap::Args)]
pub struct Options {
    /// Bearer token for a daemon with `auth.tokens_file` (prefer the
    /// environment: a flag shows in the process list).
    #[arg(long, env = "REDLOCKD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// CA bundle (PEM) to trust for an https:// daemon; unset = the system's.
    #[arg(long, env = "REDLOCKD_CA")]
    tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for a daemon that requires mutual TLS.
    #[arg(long, env = "REDLOCKD_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, env = "REDLOCKD_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

/// Why redlockctl could not connect to the daemon.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// TLS files given for a plaintext address.
    #[error("--tls-ca/--tls-cert need an https:// address, not {addr}")]
    TlsFilesWithoutHttps {
        /// The address given.
        addr: String,
    },
    /// The TLS files could not be read or used.
    #[error("{0}")]
    TlsFiles(redlockd_client::Error),
    /// The client could not connect.
    #[error("{0}")]
    Connect(redlockd_client::Error),
}

/// Connects to `addr`.
///
/// # Errors
/// What could not be read or reached.
pub async fn connect(addr: &str, options: &Options) -> Result<redlockd_client::Client, ConnectError> {
    let tls_files = options.tls_ca.is_some() || options.tls_cert.is_some();
    if tls_files && !addr.starts_with("https://") {
        return Err(ConnectError::TlsFilesWithoutHttps { addr: addr.to_owned() });
    }
    let tls = if addr.starts_with("https://") {
        let identity = options.tls_cert.as_deref().zip(options.tls_key.as_deref());
        Some(Tls::from_files(options.tls_ca.as_deref(), identity).map_err(ConnectError::TlsFiles)?)
    } else {
        None
    };
    let client_options = ClientOptions {
        token: options.token.clone(),
        tls,
    };
    redlockd_client::Client::connect(addr, client_options)
        .await
        .map_err(ConnectError::Connect)
}
