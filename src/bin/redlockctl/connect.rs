//! The connection to the daemon: plain or TLS (with a client certificate
//! for mutual TLS), and the bearer token on every call.

use std::path::PathBuf;

use redlockd::api::proto::lock_client::LockClient;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

/// A client of the daemon that sends the bearer token, if any.
pub type Client = LockClient<InterceptedService<Channel, Bearer>>;

/// How to reach and authenticate to the daemon.
#[derive(clap::Args)]
pub struct Options {
    /// Bearer token for a daemon with `auth.tokens_file` (prefer the
    /// environment: a flag shows in the process list).
    #[arg(long, env = "REDLOCKD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// CA bundle (PEM) to trust for an https:// daemon; unset = the system's.
    #[arg(long, env = "REDLOCKD_TLS_CA")]
    tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for a daemon that requires mutual TLS.
    #[arg(long, env = "REDLOCKD_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, env = "REDLOCKD_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

/// Adds `authorization: Bearer <token>` to every call.
#[derive(Clone)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

fn read(what: &str, path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Connects to `addr`.
///
/// # Errors
/// A message saying what could not be read or reached.
pub async fn connect(addr: &str, options: &Options) -> Result<Client, String> {
    let mut endpoint = Channel::from_shared(addr.to_owned()).map_err(|e| format!("--addr {addr}: {e}"))?;
    let tls_files = options.tls_ca.is_some() || options.tls_cert.is_some();
    if addr.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_enabled_roots();
        if let Some(ca) = &options.tls_ca {
            tls = tls.ca_certificate(Certificate::from_pem(read("--tls-ca", ca)?));
        }
        if let (Some(cert), Some(key)) = (&options.tls_cert, &options.tls_key) {
            tls = tls.identity(Identity::from_pem(read("--tls-cert", cert)?, read("--tls-key", key)?));
        }
        endpoint = endpoint.tls_config(tls).map_err(|e| format!("TLS: {e}"))?;
    } else if tls_files {
        return Err(format!("--tls-ca/--tls-cert need an https:// address, not {addr}"));
    }
    let token = match &options.token {
        None => None,
        Some(token) => Some(
            format!("Bearer {token}")
                .parse()
                .map_err(|_| "the token must be printable ASCII".to_owned())?,
        ),
    };
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    Ok(LockClient::with_interceptor(channel, Bearer(token)))
}
