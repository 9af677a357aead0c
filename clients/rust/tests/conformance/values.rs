//! The scenarios' values (clients/conformance/README.md#values) and
//! expectations (#expectations): `{run}`, `$name.field` references, the
//! repeat and numbered forms, and comparisons as exact integers.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// A result's fields, and a set's members' (in order).
#[derive(Default, Clone)]
pub struct Fields {
    pub fields: Map<String, Value>,
    pub members: Vec<Map<String, Value>>,
}

/// Resolves `v` with the run's prefix and what earlier steps bound.
pub fn resolve(v: &Value, prefix: &str, bound: &HashMap<String, Fields>) -> Value {
    match v {
        Value::String(s) if s.starts_with('$') => reference(&s[1..], bound),
        Value::String(s) => Value::String(s.replace("{run}", prefix)),
        Value::Array(items) => Value::Array(items.iter().map(|e| resolve(e, prefix, bound)).collect()),
        Value::Object(m) => {
            if let (Some(Value::String(text)), Some(times)) = (m.get("repeat"), m.get("times")) {
                return Value::String(text.repeat(times.as_u64().unwrap_or(0) as usize));
            }
            if let (Some(text), Some(count)) = (m.get("numbered"), m.get("count")) {
                let text = resolve(text, prefix, bound);
                let text = text.as_str().unwrap_or_default();
                return (0..count.as_u64().unwrap_or(0))
                    .map(|i| Value::String(format!("{text}{i}")))
                    .collect();
            }
            Value::Object(m.iter().map(|(k, e)| (k.clone(), resolve(e, prefix, bound))).collect())
        }
        other => other.clone(),
    }
}

/// `a.token` (a bound result's field) or `s.1.token` (a set member's).
fn reference(path: &str, bound: &HashMap<String, Fields>) -> Value {
    let parts: Vec<&str> = path.split('.').collect();
    let Some(b) = bound.get(parts[0]) else {
        return Value::String(format!("<nothing bound as {}>", parts[0]));
    };
    let fields = match parts.as_slice() {
        [_, i, _] => match i.parse::<usize>().ok().and_then(|i| b.members.get(i)) {
            Some(member) => member,
            None => return Value::String(format!("<{} has no member {i}>", parts[0])),
        },
        _ => &b.fields,
    };
    let field = parts[parts.len() - 1];
    fields
        .get(field)
        .cloned()
        .unwrap_or_else(|| Value::String(format!("<{path}: no {field}>")))
}

/// `v` as an exact integer: a JSON integer or a decimal string.
pub fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n.as_u64().map(i128::from).or_else(|| n.as_i64().map(i128::from)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Checks each expected field of `got`.
pub fn meets(
    got: &Map<String, Value>,
    expect: &Map<String, Value>,
    prefix: &str,
    bound: &HashMap<String, Fields>,
) -> Result<(), String> {
    for (key, want) in expect {
        let Some(value) = got.get(key) else {
            return Err(format!(
                "the result has no {key} (expected {})",
                resolve(want, prefix, bound)
            ));
        };
        matches(value, want, prefix, bound).map_err(|why| format!("{key}: {why}"))?;
    }
    Ok(())
}

fn matches(got: &Value, want: &Value, prefix: &str, bound: &HashMap<String, Fields>) -> Result<(), String> {
    if let Value::Object(m) = want
        && m.len() == 1
    {
        let (op, operand) = m.iter().next().unwrap();
        let operand = resolve(operand, prefix, bound);
        let holds: fn(std::cmp::Ordering) -> bool = match op.as_str() {
            "gt" => |o| o.is_gt(),
            "ge" => |o| o.is_ge(),
            "lt" => |o| o.is_lt(),
            "le" => |o| o.is_le(),
            "ne" => |o| o.is_ne(),
            _ => return Err(format!("no comparison {op}")),
        };
        return match (integer(got), integer(&operand)) {
            (Some(x), Some(y)) if holds(x.cmp(&y)) => Ok(()),
            _ => Err(format!("{got} is not {op} {operand}")),
        };
    }
    if let Value::Array(list) = want {
        let items = got.as_array().filter(|items| items.len() == list.len());
        let Some(items) = items else {
            return Err(format!("{got} does not have the {} elements expected", list.len()));
        };
        for (i, (g, w)) in items.iter().zip(list).enumerate() {
            matches(g, w, prefix, bound).map_err(|why| format!("[{i}]: {why}"))?;
        }
        return Ok(());
    }
    let want = resolve(want, prefix, bound);
    let equal = match (integer(got), integer(&want)) {
        (Some(x), Some(y)) if !got.is_string() || !want.is_string() => x == y,
        _ => *got == want,
    };
    if equal {
        Ok(())
    } else {
        Err(format!("was {got}, expected {want}"))
    }
}
