//! Streams over HTTP (docs/http.md): server-sent events or NDJSON by Accept,
//! the error last, the same JSON as data, heartbeats.

use futures::stream;

use super::*;

async fn body_of(response: Response) -> String {
    use http_body_util::BodyExt;
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

#[test]
fn events_are_chosen_by_accept_and_ndjson_otherwise() {
    let accept = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        Framing::of(&headers)
    };
    assert_eq!(accept("text/event-stream"), Framing::Sse);
    assert_eq!(accept("application/json, Text/Event-Stream;q=0.9"), Framing::Sse);
    assert_eq!(accept("application/x-ndjson"), Framing::Ndjson);
    assert_eq!(accept("*/*"), Framing::Ndjson);
    assert_eq!(Framing::of(&HeaderMap::new()), Framing::Ndjson);
}

#[tokio::test]
async fn ndjson_wraps_each_message_and_ends_with_the_error() {
    let messages = stream::iter(vec![Ok(serde_json::json!({"a": 1})), Err(Status::not_found("x"))]);
    let response = respond(messages, Framing::Ndjson, Duration::from_secs(60));
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/x-ndjson");
    assert_eq!(
        body_of(response).await,
        "{\"result\":{\"a\":1}}\n{\"error\":{\"code\":5,\"details\":[],\"message\":\"x\"}}\n"
    );
}

#[tokio::test]
async fn events_carry_the_same_json_as_data() {
    let messages = stream::iter(vec![Ok(serde_json::json!({"a": "1"})), Err(Status::aborted("x"))]);
    let response = respond(messages, Framing::Sse, Duration::from_secs(60));
    assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(
        body_of(response).await,
        "event: result\ndata: {\"a\":\"1\"}\n\nevent: error\ndata: {\"code\":10,\"details\":[],\"message\":\"x\"}\n\n"
    );
}

#[tokio::test(start_paused = true)]
async fn a_quiet_stream_gets_a_heartbeat_per_period() {
    let quiet = stream::pending::<Result<serde_json::Value, Status>>();
    let response = respond(quiet, Framing::Ndjson, Duration::from_secs(15));
    let mut body = response.into_body().into_data_stream();
    let started = Instant::now();
    for _ in 0..3 {
        let line = body.next().await.expect("a line").expect("no error");
        assert_eq!(line, "{\"heartbeat\":{}}\n");
    }
    assert_eq!(started.elapsed(), Duration::from_secs(45));
}
