//! Where a request came from, for audit events: the subject of the client
//! certificate under mutual TLS, the address otherwise. Formatted only
//! when an event is logged.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use rustls_pki_types::CertificateDer;
use tonic::Request;

/// A request's peer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    addr: Option<SocketAddr>,
    certs: Option<Arc<Vec<CertificateDer<'static>>>>,
}

impl Peer {
    /// The peer of `request` (its connection's address and certificates).
    pub(crate) fn of<T>(request: &Request<T>) -> Peer {
        Peer {
            addr: request.remote_addr(),
            certs: request.peer_certs(),
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = self.certs.as_ref().and_then(|certs| certs.first()).and_then(|cert| {
            x509_parser::parse_x509_certificate(cert.as_ref())
                .ok()
                .map(|(_, cert)| cert.subject().to_string())
        });
        match (subject, self.addr) {
            (Some(subject), Some(addr)) => write!(f, "{subject} ({addr})"),
            (Some(subject), None) => f.write_str(&subject),
            (None, Some(addr)) => write!(f, "{addr}"),
            (None, None) => f.write_str("-"),
        }
    }
}
