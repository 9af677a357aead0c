//! The OpenAPI document (docs/http.md#openapi) against the router: every
//! operation the daemon's own `GET /v1/openapi.json` lists is routed (a
//! request to it never meets the router's 404 or 405), and what the router
//! answers outside it is refused.

use hyper::Method;

use crate::support::http::Client;
use crate::support::{Cluster, Daemon};

#[tokio::test]
async fn every_documented_operation_is_routed_and_nothing_else_is() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut http = Client::connect(daemon.addr).await;
    let document = http.get("/v1/openapi.json").await;
    assert_eq!(document.status, 200);
    let document = document.json();
    assert_eq!(document["openapi"], "3.1.0");
    let paths = document["paths"].as_object().unwrap();
    let mut operations = 0;
    for (template, methods) in paths {
        for (method, operation) in methods.as_object().unwrap() {
            operations += 1;
            let path = template.replace("{resource}", "docs/a").replace("{election}", "docs/e");
            let method: Method = method.to_uppercase().parse().unwrap();
            // A field no message has: the codec refuses it (nothing is
            // taken or held, streams included), the router may not.
            let reply = if method == Method::GET {
                http.send(method.clone(), &format!("{path}?notAField=1"), &[], "").await
            } else {
                http.post(&path, r#"{"notAField":1}"#).await
            };
            let json = reply.json();
            assert_eq!(
                (reply.status.as_u16(), json["code"].as_i64()),
                (400, Some(3)),
                "{method} {path} ({}) is documented but not routed to its codec: {json}",
                operation["operationId"]
            );
            assert!(reply.message().contains("notAField"), "{method} {path}: {json}");
            // The document names each operation after the gRPC method it calls.
            let id = operation["operationId"].as_str().unwrap();
            assert!(id.contains('_'), "{id}");
        }
    }
    assert_eq!(operations, 17, "13 unary routes and 4 streams");
    // A method the document does not give a path: 405 naming the one it does.
    let other = http.send(Method::PUT, "/v1/locks/docs/a:acquire", &[], "").await;
    assert_eq!(other.status, 405);
    assert!(paths["/v1/locks/{resource}:acquire"].get("put").is_none());
    daemon.stop().await;
}
