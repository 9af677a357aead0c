//! Span names (docs/tracing.md): HTTP routes by their template, gRPC paths as
//! they are.

use super::route_of;

#[test]
fn http_routes_are_named_by_their_template_and_grpc_paths_as_they_are() {
    let cases = [
        ("/redlockd.v1.Lock/Acquire", "/redlockd.v1.Lock/Acquire"),
        ("/v1/locks/orders/42:acquire", "/v1/locks/{resource}:acquire"),
        ("/v1/locks/orders%2F42:release", "/v1/locks/{resource}:release"),
        ("/v1/locks/a:b:extend", "/v1/locks/{resource}:extend"),
        ("/v1/locks/orders/42", "/v1/locks/{resource}"),
        ("/v1/locks/x:", "/v1/locks/{resource}"),
        ("/v1/elections/jobs:resign", "/v1/elections/{name}:resign"),
        ("/v1/openapi.json", "/v1/openapi.json"),
        ("/v1/locks/", "/v1/locks/"),
    ];
    for (path, name) in cases {
        assert_eq!(route_of(path), name, "{path}");
    }
}
