//! The OpenAPI 3.1 document of the HTTP routes (docs/http.md#openapi),
//! served at `GET /v1/openapi.json`: made from the route table and the
//! proto's own descriptors (fields, types, comments), so it cannot drift
//! from what the router and the JSON codec do.

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto};
use serde_json::{Map, Value, json};

use super::json::{self, lower_camel};
use super::routes::{ALL, Route, RouteMethod};

/// Where the document is served.
pub(crate) const PATH: &str = "/v1/openapi.json";

/// The document, made once.
pub(crate) static DOCUMENT: LazyLock<Vec<u8>> =
    LazyLock::new(|| serde_json::to_vec_pretty(&document(&ALL)).unwrap_or_default());

/// The document of `routes`.
pub(crate) fn document(routes: &[Route]) -> Value {
    let mut schemas = BTreeMap::new();
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for route in routes {
        let operation = operation(route, &mut schemas);
        let method = match route.method {
            RouteMethod::Get => "get",
            RouteMethod::Post => "post",
        };
        paths
            .entry(route.template.to_owned())
            .or_default()
            .insert(method.to_owned(), operation);
    }
    schemas.insert(
        "google.rpc.Status".to_owned(),
        json!({
            "type": "object",
            "description": "An error: the gRPC code, a message naming the field, and details \
                            (google.rpc.ErrorInfo, google.rpc.QuotaFailure, ...) each with its @type.",
            "properties": {
                "code": {"type": "integer", "format": "int32"},
                "message": {"type": "string"},
                "details": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"@type": {"type": "string"}},
                    "required": ["@type"],
                }},
            },
            "required": ["code", "message"],
        }),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "redlockd",
            "version": "v1",
            "description": "HTTP/JSON for redlockd's gRPC services (docs/http.md): the same calls, \
                            the proto3 JSON mapping (64-bit integers as decimal strings, durations \
                            as \"1.5s\"), errors as google.rpc.Status.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        // Without auth.tokens_file no token is needed.
        "security": [{}, {"bearer": []}],
    })
}

/// One route's operation.
fn operation(route: &Route, schemas: &mut BTreeMap<String, Value>) -> Value {
    let parts = route.parts();
    let request = json::message(route.request);
    let (service, method) = route.rpc.split_once('/').unwrap_or((route.rpc, ""));
    let mut parameters = Vec::new();
    if let Some(variable) = parts.variable {
        parameters.push(json!({
            "name": variable,
            "in": "path",
            "required": true,
            "description": "The name; it may hold '/' (percent-encoded in a path parameter).",
            "schema": {"type": "string", "minLength": 1},
        }));
    }
    let fields: Vec<&FieldDescriptorProto> = request
        .map(|m| m.field.iter().filter(|f| Some(f.name()) != parts.variable).collect())
        .unwrap_or_default();
    let mut operation = json!({
        "operationId": format!("{}_{method}", service.trim_start_matches("redlockd.v1.")),
        "summary": format!("{} ({})", route.rpc, route.request.trim_start_matches("redlockd.v1.")),
        "description": COMMENTS.get(route.rpc).cloned().unwrap_or_default(),
        "responses": {
            "200": ok(route, schemas),
            "default": {
                "description": "An error (docs/http.md#errors).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/google.rpc.Status"}}},
            },
        },
    });
    match route.method {
        RouteMethod::Get => {
            for field in fields {
                parameters.push(json!({
                    "name": field.name(),
                    "in": "query",
                    "required": false,
                    "schema": field_schema(field, schemas),
                }));
            }
        }
        RouteMethod::Post => {
            let body = object(route.request, &fields, schemas);
            operation["requestBody"] = json!({
                "required": false,
                "content": {"application/json": {"schema": body}},
            });
        }
    }
    operation["parameters"] = Value::Array(parameters);
    operation
}

/// The success reply: one JSON object, or for a stream a line per message
/// (NDJSON, or Server-Sent Events when asked for).
fn ok(route: &Route, schemas: &mut BTreeMap<String, Value>) -> Value {
    let message = route.response.trim_start_matches("redlockd.v1.");
    let schema = reference(route.response, schemas);
    if route.is_stream() {
        json!({
            "description": format!(
                "A stream: one {message} per line, and heartbeat lines (docs/http.md#streams)."
            ),
            "content": {
                "application/x-ndjson": {"schema": schema},
                "text/event-stream": {"schema": {"type": "string"}},
            },
        })
    } else {
        json!({
            "description": format!("The {message}."),
            "content": {"application/json": {"schema": schema}},
        })
    }
}

/// A `$ref` to message `full_name`'s schema, adding it (and what it
/// names) to `schemas`.
fn reference(full_name: &str, schemas: &mut BTreeMap<String, Value>) -> Value {
    let name = full_name.trim_start_matches('.').to_owned();
    if !schemas.contains_key(&name) {
        // A placeholder first: a message may name itself.
        schemas.insert(name.clone(), Value::Null);
        let fields: Vec<&FieldDescriptorProto> = json::message(&name)
            .map(|m| m.field.iter().collect())
            .unwrap_or_default();
        let schema = object(&name, &fields, schemas);
        schemas.insert(name.clone(), schema);
    }
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// An object schema of `fields` of message `full_name`.
fn object(full_name: &str, fields: &[&FieldDescriptorProto], schemas: &mut BTreeMap<String, Value>) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| {
            let mut schema = field_schema(f, schemas);
            if let Some(comment) = COMMENTS.get(&format!("{full_name}.{}", f.name()))
                && schema.get("$ref").is_none()
            {
                schema["description"] = Value::String(comment.clone());
            }
            (f.json_name.clone().unwrap_or_else(|| lower_camel(f.name())), schema)
        })
        .collect();
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

/// The schema of one field's JSON value.
fn field_schema(field: &FieldDescriptorProto, schemas: &mut BTreeMap<String, Value>) -> Value {
    let one = match field.r#type() {
        Type::String => json!({"type": "string"}),
        Type::Bool => json!({"type": "boolean"}),
        Type::Int32 | Type::Sint32 | Type::Sfixed32 => json!({"type": "integer", "format": "int32"}),
        Type::Uint32 | Type::Fixed32 => json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
        Type::Int64 | Type::Sint64 | Type::Sfixed64 => {
            json!({"type": "string", "format": "int64", "pattern": "^-?[0-9]{1,19}$"})
        }
        Type::Uint64 | Type::Fixed64 => json!({"type": "string", "format": "uint64", "pattern": "^[0-9]{1,20}$"}),
        Type::Double | Type::Float => json!({"type": "number"}),
        Type::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
        Type::Enum => enumeration(field.type_name()),
        Type::Message | Type::Group => match field.type_name() {
            ".google.protobuf.Duration" => json!({
                "type": "string",
                "description": "A duration in seconds with an 's': \"1.5s\".",
                "pattern": "^-?[0-9]{1,12}(\\.[0-9]{1,9})?s$",
            }),
            ".google.protobuf.Timestamp" => json!({"type": "string", "format": "date-time"}),
            other => reference(other, schemas),
        },
    };
    if field.label() == Label::Repeated {
        json!({"type": "array", "items": one})
    } else {
        one
    }
}

/// An enum's schema: its value names.
fn enumeration(type_name: &str) -> Value {
    let (package, name) = type_name
        .trim_start_matches('.')
        .rsplit_once('.')
        .unwrap_or(("", type_name));
    let names: Vec<&str> = json::files()
        .iter()
        .filter(|f| f.package() == package)
        .flat_map(|f| &f.enum_type)
        .filter(|e| e.name() == name)
        .flat_map(|e| e.value.iter().map(|v| v.name()))
        .collect();
    json!({"type": "string", "enum": names})
}

/// The proto's comments: of each method (`redlockd.v1.Lock/Acquire`) and
/// each field (`redlockd.v1.AcquireRequest.ttl`).
static COMMENTS: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    let mut comments = HashMap::new();
    for file in json::files().iter().filter(|f| f.package() == "redlockd.v1") {
        let Some(info) = &file.source_code_info else {
            continue;
        };
        for location in &info.location {
            let text = location.leading_comments().trim();
            if text.is_empty() {
                continue;
            }
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let key = match location.path.as_slice() {
                // service = 6, method = 2
                [6, s, 2, m] => service_method(file, *s, *m),
                // message_type = 4, field = 2
                [4, msg, 2, f] => message_field(file, *msg, *f),
                _ => None,
            };
            if let Some(key) = key {
                comments.insert(key, text);
            }
        }
    }
    comments
});

fn service_method(file: &prost_types::FileDescriptorProto, s: i32, m: i32) -> Option<String> {
    let service = file.service.get(usize::try_from(s).ok()?)?;
    let method = service.method.get(usize::try_from(m).ok()?)?;
    Some(format!("{}.{}/{}", file.package(), service.name(), method.name()))
}

fn message_field(file: &prost_types::FileDescriptorProto, msg: i32, f: i32) -> Option<String> {
    let message: &DescriptorProto = file.message_type.get(usize::try_from(msg).ok()?)?;
    let field = message.field.get(usize::try_from(f).ok()?)?;
    Some(format!("{}.{}.{}", file.package(), message.name(), field.name()))
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
