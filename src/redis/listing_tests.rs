//! Listing replies (docs/design.md#listing-and-force-release): two replies per
//! lock, a short reply refused, SCAN's cursor and keys.

use fred::prelude::Value;

use super::*;

fn s(text: &str) -> Value {
    Value::from(text)
}

fn array(values: Vec<Value>) -> Value {
    Value::Array(values)
}

fn err<T: std::fmt::Debug>(result: Result<T, NodeError>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn views_read_two_replies_per_lock_and_refuse_a_short_reply() {
    let reply = array(vec![s("a\nr"), Value::Integer(10), Value::Null, Value::Integer(-2)]);
    let read = views(reply, 2).unwrap();
    assert_eq!(read[0].value.as_deref(), Some("a"));
    assert_eq!(read[0].holder.as_deref(), Some("r"));
    assert_eq!(read[1], KeyView::default());
    assert!(err(views(array(vec![s("a")]), 1)).contains("expected 2 elements"));
}

#[test]
fn scan_reads_the_cursor_and_the_keys() {
    let reply = array(vec![s("17"), array(vec![s("k1"), s("k2")])]);
    assert_eq!(scan(reply), Ok((17, vec!["k1".to_owned(), "k2".to_owned()])));
    assert!(err(scan(array(vec![s("x"), array(vec![])]))).contains("cursor"));
    assert!(err(scan(s("0"))).contains("not an array"));
}
