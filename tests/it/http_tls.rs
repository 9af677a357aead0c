//! HTTP on the TLS listener (docs/http.md#tls): mutual TLS as for gRPC, and
//! ALPN offering `http/1.1` beside `h2`, so a client that offers only
//! `http/1.1` (Python's requests does) is served HTTP/1.1 and one that
//! offers `h2` HTTP/2.

use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::TcpStream;

use crate::support::certs::Pki;
use crate::support::{Cluster, Daemon, env_with};

/// A TLS connection to `daemon` offering `alpn`, with client certificate
/// `identity` if given; `None` when the handshake is refused.
async fn connect(
    daemon: &Daemon,
    pki: &Pki,
    identity: Option<&str>,
    alpn: &[&str],
) -> Option<tokio_rustls::client::TlsStream<TcpStream>> {
    connect_to(daemon.addr, pki, identity, alpn).await
}

/// `connect` to a daemon at `addr`.
pub(crate) async fn connect_to(
    addr: std::net::SocketAddr,
    pki: &Pki,
    identity: Option<&str>,
    alpn: &[&str],
) -> Option<tokio_rustls::client::TlsStream<TcpStream>> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pki.read("ca.pem")) {
        roots.add(cert.unwrap()).unwrap();
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(name) => {
            let chain = CertificateDer::pem_slice_iter(&pki.read(&format!("{name}.pem")))
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            let key = PrivateKeyDer::from_pem_slice(&pki.read(&format!("{name}.key"))).unwrap();
            builder.with_client_auth_cert(chain, key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    let tcp = TcpStream::connect(addr).await.ok()?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from("127.0.0.1").unwrap();
    connector.connect(name, tcp).await.ok()
}

/// `POST path body` over `tls` with HTTP/1.1 or HTTP/2; (status, body).
async fn post(tls: tokio_rustls::client::TlsStream<TcpStream>, h2: bool, path: &str, body: &str) -> (u16, String) {
    post_with(tls, h2, path, body, None).await
}

/// `post`, with `Authorization: Bearer <token>` when given.
pub(crate) async fn post_with(
    tls: tokio_rustls::client::TlsStream<TcpStream>,
    h2: bool,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> (u16, String) {
    let mut request = Request::post(format!("https://127.0.0.1{path}"))
        .header("host", "127.0.0.1")
        .header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let io = TokioIo::new(tls);
    let response = if h2 {
        let (mut send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .unwrap();
        tokio::spawn(conn);
        send.send_request(request).await
    } else {
        let (mut send, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(conn);
        send.send_request(request).await
    };
    match response {
        Ok(response) => {
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned())
        }
        Err(e) => (0, e.to_string()),
    }
}

#[tokio::test]
async fn http_1_1_and_http_2_are_served_over_mutual_tls_by_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    pki.ca("ca");
    pki.issue("ca", "server", "subjectAltName=IP:127.0.0.1");
    pki.issue("ca", "client", "extendedKeyUsage=clientAuth");
    let cluster = Cluster::start(5);
    let daemon = Daemon::start_with(env_with(
        &cluster,
        &[
            ("REDLOCKD__SERVER__TLS_CERT_FILE", pki.file("server.pem")),
            ("REDLOCKD__SERVER__TLS_KEY_FILE", pki.file("server.key")),
            ("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE", pki.file("ca.pem")),
        ],
    ))
    .await;

    // Only http/1.1 offered (as Python's requests does): HTTP/1.1.
    let tls = connect(&daemon, &pki, Some("client"), &["http/1.1"])
        .await
        .expect("handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (status, body) = post(tls, false, "/v1/locks/tls/a:acquire", r#"{"ttl":"5s"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""acquired":true"#), "{body}");
    // Both offered (curl, browsers): h2 first.
    let tls = connect(&daemon, &pki, Some("client"), &["h2", "http/1.1"])
        .await
        .expect("handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (status, body) = post(tls, true, "/v1/locks/tls/b:acquire", r#"{"ttl":"5s"}"#).await;
    assert_eq!(status, 200, "{body}");
    // No ALPN at all: HTTP/1.1.
    let tls = connect(&daemon, &pki, Some("client"), &[]).await.expect("handshake");
    let (status, body) = post(tls, false, "/v1/locks/tls/a:acquire", r#"{"ttl":"5s"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""acquired":false"#), "{body}");
    // Without a client certificate: no request is served.
    let served = match connect(&daemon, &pki, None, &["http/1.1"]).await {
        Some(tls) => post(tls, false, "/v1/locks/tls/c:acquire", "{}").await.0 == 200,
        None => false,
    };
    assert!(!served, "a client without a certificate was served over HTTP");
    daemon.stop().await;
}
