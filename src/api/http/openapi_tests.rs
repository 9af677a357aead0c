//! The OpenAPI document's tests, and the agreement of the route table,
//! the document and the protos' `google.api.http` annotations.

use super::*;

/// One `google.api.http` rule.
#[derive(Debug, PartialEq)]
struct Rule {
    selector: String,
    method: String,
    path: String,
    body: Option<String>,
}

/// The descriptor set's `google.api.http` method options: only the fields
/// read here (prost skips the rest).
mod annotated {
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Set {
        #[prost(message, repeated, tag = "1")]
        pub(super) file: Vec<File>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct File {
        #[prost(string, tag = "2")]
        pub(super) package: String,
        #[prost(message, repeated, tag = "6")]
        pub(super) service: Vec<Service>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Service {
        #[prost(string, tag = "1")]
        pub(super) name: String,
        #[prost(message, repeated, tag = "2")]
        pub(super) method: Vec<Method>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Method {
        #[prost(string, tag = "1")]
        pub(super) name: String,
        #[prost(message, optional, tag = "4")]
        pub(super) options: Option<Options>,
    }
    /// google.protobuf.MethodOptions with its `google.api.http` extension.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Options {
        #[prost(message, optional, tag = "72295728")]
        pub(super) http: Option<HttpRule>,
    }
    /// google.api.HttpRule: the patterns and the body.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct HttpRule {
        #[prost(string, tag = "2")]
        pub(super) get: String,
        #[prost(string, tag = "4")]
        pub(super) post: String,
        #[prost(string, tag = "7")]
        pub(super) body: String,
    }
}

/// The `google.api.http` annotations of the protos, from the daemon's own
/// descriptor set (what Envoy's transcoder and grpc-gateway read).
fn rules() -> Vec<Rule> {
    use prost::Message as _;
    let set = annotated::Set::decode(crate::api::proto::FILE_DESCRIPTOR_SET).unwrap();
    let mut rules = Vec::new();
    for file in set.file.iter().filter(|f| f.package == "redlockd.v1") {
        for service in &file.service {
            for method in &service.method {
                let Some(http) = method.options.as_ref().and_then(|o| o.http.as_ref()) else {
                    continue;
                };
                let (verb, path) = if http.get.is_empty() {
                    ("post", &http.post)
                } else {
                    ("get", &http.get)
                };
                rules.push(Rule {
                    selector: format!("{}.{}.{}", file.package, service.name, method.name),
                    method: verb.to_owned(),
                    path: path.clone(),
                    body: (!http.body.is_empty()).then(|| http.body.clone()),
                });
            }
        }
    }
    rules
}

/// The rule a route should have.
fn rule_of(route: &Route) -> Rule {
    let parts = route.parts();
    // A stream's body is its first message, the request's `start`.
    let body = match route.method {
        RouteMethod::Get => None,
        RouteMethod::Post if route.is_stream() => Some("start".to_owned()),
        RouteMethod::Post => Some("*".to_owned()),
    };
    let field = |v: &str| match &body {
        Some(b) if b != "*" => format!("{b}.{v}"),
        _ => v.to_owned(),
    };
    let path = match parts.variable {
        Some(v) => route
            .template
            .replace(&format!("{{{v}}}"), &format!("{{{}=**}}", field(v))),
        None => route.template.to_owned(),
    };
    Rule {
        selector: route.rpc.replace('/', "."),
        method: if route.method == RouteMethod::Get {
            "get"
        } else {
            "post"
        }
        .to_owned(),
        path,
        body,
    }
}

#[test]
fn the_http_rules_the_router_and_the_document_agree() {
    let wanted: Vec<Rule> = ALL.iter().map(rule_of).collect();
    let found = rules();
    for rule in &found {
        assert!(
            wanted.contains(rule),
            "the protos annotate {rule:?}, which no route serves"
        );
    }
    for rule in &wanted {
        assert!(
            found.contains(rule),
            "the router serves {rule:?}, which no proto annotation has"
        );
    }
    // Every selector names a method of the proto.
    for rule in &found {
        let (service, method) = rule.selector.rsplit_once('.').unwrap();
        let (package, service) = service.rsplit_once('.').unwrap();
        let known = json::files()
            .iter()
            .filter(|f| f.package() == package)
            .flat_map(|f| &f.service)
            .filter(|s| s.name() == service)
            .any(|s| s.method.iter().any(|m| m.name() == method));
        assert!(known, "{} is not a method of the proto", rule.selector);
    }
    // The document has exactly the rules' operations.
    let doc = document(&ALL);
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, methods)| methods.as_object().unwrap().keys().map(|m| (m.clone(), path.clone())))
        .collect();
    let mut ruled: Vec<(String, String)> = found
        .iter()
        .map(|r| {
            let path = r.path.replace("start.", "").replace("=**", "");
            (r.method.clone(), path)
        })
        .collect();
    documented.sort();
    ruled.sort();
    assert_eq!(documented, ruled);
}

#[test]
fn every_route_is_an_operation_with_its_fields_typed_as_the_codec_reads_them() {
    let doc = document(&ALL);
    assert_eq!(doc["openapi"], "3.1.0");
    let acquire = &doc["paths"]["/v1/locks/{resource}:acquire"]["post"];
    assert_eq!(acquire["operationId"], "Lock_Acquire");
    assert!(acquire["description"].as_str().unwrap().contains("takes the lock"));
    let body = &acquire["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(body["properties"]["ttl"]["pattern"], "^-?[0-9]{1,12}(\\.[0-9]{1,9})?s$");
    assert!(body["properties"]["reentrancyKey"].is_object());
    assert!(
        body["properties"].get("resource").is_none(),
        "the path's field is not in the body"
    );
    assert_eq!(body["additionalProperties"], false);
    let lease = &doc["components"]["schemas"]["redlockd.v1.Lease"];
    assert_eq!(lease["properties"]["fencingToken"]["format"], "uint64");
    let list = &doc["paths"]["/v1/admin/locks"]["get"]["parameters"];
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["prefix", "page_size", "page_token"]);
    let operations: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_object().unwrap().len())
        .sum();
    assert_eq!(operations, ALL.len());
    let hold = &doc["paths"]["/v1/locks/{resource}:hold"]["post"]["responses"]["200"]["content"];
    assert!(hold["application/x-ndjson"].is_object());
}
