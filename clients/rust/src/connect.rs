//! How to reach the daemon: its address, TLS (and a client certificate for
//! mutual TLS), and the bearer token sent with every call.

use std::path::Path;

use tonic::metadata::{Ascii, MetadataMap, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

use crate::error::Error;
use crate::proto::lock_client::LockClient;

/// The default address: the sidecar on loopback.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7420";

/// The generated client with the bearer token on every call.
pub type Stub = LockClient<InterceptedService<Channel, Bearer>>;

/// The generated admin client (`redlockd.v1.Admin`) with the bearer token
/// on every call.
pub type AdminStub = crate::proto::admin_client::AdminClient<InterceptedService<Channel, Bearer>>;

/// The generated election client (`redlockd.v1.Election`) with the bearer
/// token on every call.
pub type ElectionStub = crate::proto::election_client::ElectionClient<InterceptedService<Channel, Bearer>>;

/// How to authenticate to the daemon.
#[derive(Clone, Default)]
pub struct Options {
    /// Bearer token for a daemon with `auth.tokens_file`.
    pub token: Option<String>,
    /// TLS; `None` = plaintext (unless the address says `https://`, which
    /// trusts the system's roots).
    pub tls: Option<Tls>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// TLS settings, as PEM.
#[derive(Clone, Default)]
pub struct Tls {
    /// The CA to trust; `None` = the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// A client certificate chain and its key, for mutual TLS.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl Tls {
    /// Reads the PEM files: `ca` to trust, and `cert` with `key` for mutual TLS.
    ///
    /// # Errors
    /// `InvalidArgument` naming the file that could not be read.
    pub fn from_files(ca: Option<&Path>, cert_and_key: Option<(&Path, &Path)>) -> Result<Tls, Error> {
        let read = |what: &str, path: &Path| {
            std::fs::read(path).map_err(|e| Error::InvalidArgument(format!("{what} {}: {e}", path.display())))
        };
        Ok(Tls {
            ca_pem: ca.map(|ca| read("CA", ca)).transpose()?,
            identity: match cert_and_key {
                Some((cert, key)) => Some((read("certificate", cert)?, read("key", key)?)),
                None => None,
            },
        })
    }
}

impl Options {
    /// What the environment says, as `redlockctl` reads it: `REDLOCKD_TOKEN`,
    /// and `REDLOCKD_CA`, `REDLOCKD_CERT` with `REDLOCKD_KEY` (PEM files).
    ///
    /// # Errors
    /// `InvalidArgument` when a file cannot be read, or only one of
    /// `REDLOCKD_CERT` and `REDLOCKD_KEY` is set.
    pub fn from_env() -> Result<Options, Error> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let (ca, cert, key) = (var("REDLOCKD_CA"), var("REDLOCKD_CERT"), var("REDLOCKD_KEY"));
        let cert_and_key = match (&cert, &key) {
            (Some(cert), Some(key)) => Some((Path::new(cert.as_str()), Path::new(key.as_str()))),
            (None, None) => None,
            _ => {
                return Err(Error::InvalidArgument(
                    "REDLOCKD_CERT and REDLOCKD_KEY must be set together".into(),
                ));
            }
        };
        let tls = if ca.is_some() || cert_and_key.is_some() {
            Some(Tls::from_files(ca.as_deref().map(Path::new), cert_and_key)?)
        } else {
            None
        };
        Ok(Options {
            token: var("REDLOCKD_TOKEN"),
            tls,
        })
    }
}

/// Adds `authorization: Bearer <token>` to every call.
#[derive(Clone)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl Bearer {
    /// Adds the token, if any, to `metadata`.
    pub(crate) fn add_to(&self, metadata: &mut MetadataMap) {
        if let Some(value) = &self.0 {
            metadata.insert("authorization", value.clone());
        }
    }
}

impl Interceptor for Bearer {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        self.add_to(request.metadata_mut());
        crate::trace_context::add_to(request.metadata_mut());
        Ok(request)
    }
}

/// Connects to `addr` (`host:port`, `http://…` or `https://…`).
pub(crate) async fn connect(addr: &str, options: &Options) -> Result<(Stub, Channel, Bearer), Error> {
    let url = if addr.contains("://") {
        addr.to_owned()
    } else if options.tls.is_some() {
        format!("https://{addr}")
    } else {
        format!("http://{addr}")
    };
    let mut endpoint =
        Channel::from_shared(url.clone()).map_err(|e| Error::InvalidArgument(format!("address {addr}: {e}")))?;
    if url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_enabled_roots();
        if let Some(settings) = &options.tls {
            if let Some(ca) = &settings.ca_pem {
                tls = tls.ca_certificate(Certificate::from_pem(ca));
            }
            if let Some((cert, key)) = &settings.identity {
                tls = tls.identity(Identity::from_pem(cert, key));
            }
        }
        endpoint = endpoint.tls_config(tls)?;
    } else if options.tls.is_some() {
        return Err(Error::InvalidArgument(format!(
            "TLS settings need an https:// address (or host:port), not {addr}"
        )));
    }
    let token = match &options.token {
        None => None,
        Some(token) => Some(
            format!("Bearer {token}")
                .parse()
                .map_err(|_| Error::InvalidArgument("the token must be printable ASCII".into()))?,
        ),
    };
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| Error::Transport(format!("connecting to {addr}: {}", chain(&e))))?;
    let bearer = Bearer(token);
    Ok((
        LockClient::with_interceptor(channel.clone(), bearer.clone()),
        channel,
        bearer,
    ))
}

/// An error with its causes, `a: b: c`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
