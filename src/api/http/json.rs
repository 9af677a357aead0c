//! Requests and replies as JSON, per the proto3 JSON mapping
//! (docs/http.md#json): the generated serde impls (pbjson) do the mapping;
//! this file gathers a request's fields from the path, the query string
//! and the body, and turns every way JSON can be wrong into a message
//! naming the field.

use std::sync::LazyLock;

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tonic::Status;

use crate::api::proto::FILE_DESCRIPTOR_SET;

/// The largest request body, in bytes (docs/http.md#limits).
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;

/// The daemon's message descriptors, read once.
static DESCRIPTORS: LazyLock<FileDescriptorSet> =
    LazyLock::new(|| FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap_or_default());

/// The daemon's proto files (and those they import).
pub(crate) fn files() -> &'static [prost_types::FileDescriptorProto] {
    &DESCRIPTORS.file
}

/// The descriptor of message `full_name` (`redlockd.v1.AcquireRequest`).
pub(crate) fn message(full_name: &str) -> Option<&'static DescriptorProto> {
    let (package, name) = full_name.rsplit_once('.')?;
    DESCRIPTORS
        .file
        .iter()
        .filter(|f| f.package() == package)
        .flat_map(|f| &f.message_type)
        .find(|m| m.name() == name)
}

/// Where a request's fields come from.
pub(crate) struct Sources<'a> {
    /// The request message's full name.
    pub message: &'static str,
    /// The path variable: its field name and its decoded value.
    pub path: Option<(&'static str, String)>,
    /// The raw query string.
    pub query: Option<&'a str>,
    /// The body (empty for none).
    pub body: &'a [u8],
}

/// The request message from its sources.
///
/// # Errors
/// `InvalidArgument` naming the field (or the JSON position) for malformed
/// JSON, a body that is not an object, an unknown field, a wrong type, a
/// 64-bit integer sent as a JSON number, or a path field contradicted by
/// the body.
pub(crate) fn request<T: DeserializeOwned>(sources: Sources<'_>) -> Result<T, Status> {
    let mut fields = if sources.body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(sources.body) {
            Ok(Value::Object(fields)) => fields,
            Ok(other) => {
                return Err(Status::invalid_argument(format!(
                    "the request body must be a JSON object (the fields of {}), not {}",
                    sources.message,
                    kind(&other)
                )));
            }
            Err(e) => {
                return Err(Status::invalid_argument(format!(
                    "the request body is not valid JSON: {e}"
                )));
            }
        }
    };
    if let Some(query) = sources.query {
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            if fields.contains_key(key.as_ref()) {
                return Err(Status::invalid_argument(format!(
                    "{key}: given twice (in the query string and the body, or twice in the query string)"
                )));
            }
            fields.insert(key.into_owned(), Value::String(value.into_owned()));
        }
    }
    if let Some((field, value)) = sources.path {
        let camel = lower_camel(field);
        for spelling in [field, camel.as_str()] {
            match fields.get(spelling) {
                Some(Value::String(given)) if *given == value => {}
                Some(_) => {
                    return Err(Status::invalid_argument(format!(
                        "{spelling}: the path names {value:?}; leave it out of the body or give the same"
                    )));
                }
                None => {}
            }
            fields.remove(spelling);
        }
        fields.insert(field.to_owned(), Value::String(value));
    }
    let fields = Value::Object(fields);
    if let Some(descriptor) = message(sources.message) {
        exact_integers(descriptor, &fields, "")?;
    }
    serde_path_to_error::deserialize(fields).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // pbjson reads numbers through an untagged enum whose own message
        // says nothing useful.
        let inner = if inner.contains("untagged enum") {
            "expected a number (a 64-bit one as a string of decimal digits)".to_owned()
        } else {
            inner
        };
        if path == "." {
            Status::invalid_argument(format!("{}: {inner}", sources.message))
        } else {
            Status::invalid_argument(format!("{path}: {inner}"))
        }
    })
}

/// A reply's JSON.
///
/// # Errors
/// `Internal` when a value has no JSON form (a duration with mixed signs).
pub(crate) fn reply<T: Serialize>(message: &T) -> Result<Vec<u8>, Status> {
    serde_json::to_vec(message).map_err(|e| Status::internal(format!("the reply has no JSON form: {e}")))
}

/// Refuses a 64-bit integer field given as a JSON number: a sender in
/// JavaScript has already rounded it above 2^53, and the daemon cannot
/// tell (docs/http.md#json).
fn exact_integers(descriptor: &DescriptorProto, value: &Value, at: &str) -> Result<(), Status> {
    let Value::Object(fields) = value else {
        return Ok(());
    };
    for field in &descriptor.field {
        let json_name = field.json_name.clone().unwrap_or_else(|| lower_camel(field.name()));
        let Some(given) = fields.get(field.name()).or_else(|| fields.get(&json_name)) else {
            continue;
        };
        let name = format!("{at}{}", field.name());
        let values: Vec<&Value> = match (field.label(), given) {
            (Label::Repeated, Value::Array(items)) => items.iter().collect(),
            _ => vec![given],
        };
        for v in values {
            match field.r#type() {
                Type::Int64 | Type::Uint64 | Type::Sint64 | Type::Fixed64 | Type::Sfixed64 if v.is_number() => {
                    return Err(Status::invalid_argument(format!(
                        "{name}: a 64-bit integer must be a JSON string of decimal digits (\"{v}\"), \
                         not a number: JSON numbers lose precision above 2^53"
                    )));
                }
                Type::Message => {
                    if let Some(nested) = message(field.type_name().trim_start_matches('.')) {
                        exact_integers(nested, v, &format!("{name}."))?;
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// `snake_case` as `lowerCamelCase`, as protoc writes `json_name`.
pub(crate) fn lower_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// What a JSON value is, for a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
