//! Traces (docs/tracing.md): the real binary exports to a real OTLP/gRPC
//! receiver (the collector's TraceService, generated from the
//! opentelemetry-proto definitions) started here; a call with a W3C
//! `traceparent` shows up in the caller's trace with its rounds below it.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::Method;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::pipeline_request::Call;
use redlockd_client::proto::{ExtendRequest, PipelineRequest, ReleaseRequest};
use tokio::time::Instant;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::support::http::Client as HttpClient;
use crate::support::rig::BinaryDaemon;
use crate::support::tenants::{acquire, dur};
use crate::support::{Cluster, test_env};

/// The caller's trace and span, as its `traceparent` names them.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
/// The trace of the call made over HTTP.
const HTTP_TRACE_ID: &str = "5bf92f3577b34da6a3ce929d0e0e4736";
/// The trace of the call made through the client library.
const LIBRARY_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";

/// What the receiver was sent: each span with its service's name.
#[derive(Default, Clone)]
struct Received(Arc<Mutex<Vec<(String, Span)>>>);

#[tonic::async_trait]
impl TraceService for Received {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.0.lock().unwrap();
        for resource_spans in request.into_inner().resource_spans {
            let attributes = resource_spans.resource.map(|r| r.attributes).unwrap_or_default();
            let service = attributes
                .iter()
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                    Value::StringValue(name) => Some(name.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                spans.extend(scope.spans.into_iter().map(|span| (service.clone(), span)));
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Received {
    fn spans(&self) -> Vec<(String, Span)> {
        self.0.lock().unwrap().clone()
    }

    /// Waits (at most 20 s) until a span satisfies `found`.
    async fn wait_for(&self, what: &str, found: impl Fn(&Span) -> bool) -> Span {
        let start = Instant::now();
        loop {
            if let Some((_, span)) = self.spans().into_iter().find(|(_, span)| found(span)) {
                return span;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no span {what} arrived: {:#?}",
                self.names()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn names(&self) -> Vec<String> {
        self.spans().iter().map(|(_, span)| span.name.clone()).collect()
    }
}

/// A span's attributes as text.
fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(s)) => s.clone(),
                Some(Value::IntValue(i)) => i.to_string(),
                Some(Value::BoolValue(b)) => b.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

/// `request` carrying the caller's `traceparent` (sampled).
fn traced<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let parent = format!("00-{TRACE_ID}-{CALLER_SPAN}-01");
    request.metadata_mut().insert("traceparent", parent.parse().unwrap());
    request
}

/// The round spans under `parent`, by name, each with its masters.
fn rounds_under(received: &Received, parent: &Span) -> HashMap<String, String> {
    received
        .spans()
        .into_iter()
        .filter(|(_, span)| span.parent_span_id == parent.span_id && span.trace_id == parent.trace_id)
        .map(|(_, span)| (span.name.clone(), attributes(&span)["masters.answered"].clone()))
        .collect()
}

#[tokio::test]
async fn a_call_with_a_traceparent_is_exported_in_the_callers_trace_with_its_rounds() {
    let receiver = Received::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector = listener.local_addr().unwrap();
    let serving = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(receiver.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    let cluster = Cluster::start(3);
    let mut env = test_env(&cluster);
    env.insert(
        "REDLOCKD__TELEMETRY__OTLP__ENDPOINT".into(),
        format!("http://{collector}"),
    );
    // Batches leave every 100 ms rather than every 5 s (the SDK's variable).
    env.insert("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into());
    let daemon = BinaryDaemon::start(env).await;
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", daemon.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = LockClient::new(channel.clone());

    // Health checks (the start-up wait made some too) are not traced.
    HealthClient::new(channel)
        .check(traced(HealthCheckRequest::default()))
        .await
        .unwrap();
    let reply = client
        .acquire(traced(acquire("traced/orders", 10_000, "tracer")))
        .await
        .unwrap()
        .into_inner();
    let lease = reply.lease.expect("granted");

    let call = receiver
        .wait_for("for the Acquire", |span| span.name == "/redlockd.v1.Lock/Acquire")
        .await;
    // In the caller's trace, below the caller's span, as the server side.
    assert_eq!(hex(&call.trace_id), TRACE_ID);
    assert_eq!(hex(&call.parent_span_id), CALLER_SPAN);
    assert_eq!(call.kind, 2, "SPAN_KIND_SERVER");
    let said = attributes(&call);
    assert_eq!(said["resource"], "traced/orders");
    assert_eq!(said["tenant"], "");
    assert_eq!(said["outcome"], "granted");
    assert_eq!(said["token"], lease.fencing_token.to_string());
    assert_eq!(said["http.response.status_code"], "200");
    // Round one below it, naming the masters that answered (a quorum at least).
    let rounds = rounds_under(&receiver, &call);
    let masters = rounds
        .get("acquire round one")
        .unwrap_or_else(|| panic!("no round one under {rounds:?}"));
    let answered: Vec<&str> = masters.split(',').collect();
    assert!(answered.len() >= 2, "{masters}");
    assert!(answered.iter().all(|m| m.starts_with("127.0.0.1:")), "{masters}");

    // Extend and Release, each with its round.
    let extended = client
        .extend(traced(ExtendRequest {
            resource: "traced/orders".into(),
            value: lease.value.clone(),
            ttl: dur(10_000),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(extended.extended);
    client
        .release(traced(ReleaseRequest {
            resource: "traced/orders".into(),
            value: lease.value.clone(),
        }))
        .await
        .unwrap();
    for (method, round, outcome) in [
        ("/redlockd.v1.Lock/Extend", "extend", "extended"),
        ("/redlockd.v1.Lock/Release", "release", "released"),
    ] {
        let call = receiver.wait_for(method, |span| span.name == method).await;
        assert_eq!(hex(&call.trace_id), TRACE_ID);
        assert_eq!(attributes(&call)["outcome"], outcome);
        // Round spans end before their call's, so they were in its batch or an earlier one.
        let rounds = rounds_under(&receiver, &call);
        assert!(rounds.get(round).is_some_and(|m| !m.is_empty()), "{method}: {rounds:?}");
    }

    // A Pipeline stream's calls: a span each below the stream's, with the
    // same attributes and their rounds below them.
    let calls = vec![PipelineRequest {
        id: 7,
        call: Some(Call::Acquire(acquire("traced/pipelined", 10_000, "tracer"))),
    }];
    let mut replies = client
        .pipeline(traced(tokio_stream::iter(calls)))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().expect("a reply");
    assert_eq!(reply.id, 7);
    let carried = receiver
        .wait_for("for the pipelined Acquire", |span| {
            span.name == "/redlockd.v1.Lock/Pipeline/Acquire"
        })
        .await;
    let stream = receiver
        .wait_for("for the Pipeline stream", |span| {
            span.name == "/redlockd.v1.Lock/Pipeline"
        })
        .await;
    assert_eq!(hex(&stream.trace_id), TRACE_ID);
    assert_eq!(
        (&carried.trace_id, &carried.parent_span_id),
        (&stream.trace_id, &stream.span_id)
    );
    assert_eq!(attributes(&carried)["resource"], "traced/pipelined");
    assert_eq!(attributes(&carried)["outcome"], "granted");
    let rounds = rounds_under(&receiver, &carried);
    assert!(rounds.contains_key("acquire round one"), "{rounds:?}");

    // An HTTP route: the same layer, the span named by the route's template.
    let mut http = HttpClient::connect(daemon.addr).await;
    let parent = format!("00-{HTTP_TRACE_ID}-{CALLER_SPAN}-01");
    let headers = [("content-type", "application/json"), ("traceparent", parent.as_str())];
    let reply = http
        .send(
            Method::POST,
            "/v1/locks/traced%2Fhttp:acquire",
            &headers,
            r#"{"ttl":"10s"}"#,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let call = receiver
        .wait_for("for the HTTP acquire", |span| {
            hex(&span.trace_id) == HTTP_TRACE_ID && span.parent_span_id == unhex(CALLER_SPAN)
        })
        .await;
    assert_eq!(call.name, "/v1/locks/{resource}:acquire");
    let said = attributes(&call);
    assert_eq!(
        (said["resource"].as_str(), said["outcome"].as_str()),
        ("traced/http", "granted")
    );
    assert_eq!(said["token"], reply.json()["lease"]["fencingToken"].as_str().unwrap());
    assert!(rounds_under(&receiver, &call).contains_key("acquire round one"));

    // A call without a traceparent starts a trace of its own; contention
    // is its outcome, not an error.
    let mut other = client.clone();
    let first = other
        .acquire(acquire("traced/busy", 10_000, "a"))
        .await
        .unwrap()
        .into_inner();
    assert!(first.acquired);
    let second = other
        .acquire(acquire("traced/busy", 10_000, "b"))
        .await
        .unwrap()
        .into_inner();
    assert!(!second.acquired);
    let refused = receiver
        .wait_for("for the refused Acquire", |span| {
            span.name == "/redlockd.v1.Lock/Acquire" && attributes(span).get("outcome").is_some_and(|o| o == "taken")
        })
        .await;
    assert_ne!(hex(&refused.trace_id), TRACE_ID);
    assert!(refused.parent_span_id.is_empty(), "a root span");
    assert_eq!(refused.status.as_ref().map_or(0, |s| s.code), 0, "unset, not an error");

    // The client library (its `opentelemetry` feature) sends the trace
    // context of the caller's current OpenTelemetry context.
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let library = redlockd_client::Client::connect(&daemon.addr.to_string(), Default::default())
        .await
        .unwrap();
    let caller = SpanContext::new(
        TraceId::from_hex(LIBRARY_TRACE_ID).unwrap(),
        SpanId::from_hex(CALLER_SPAN).unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let lease = {
        let _attached = opentelemetry::Context::new().with_remote_span_context(caller).attach();
        let options = redlockd_client::AcquireOptions::new().ttl(Duration::from_secs(10));
        library
            .acquire("traced/library", options)
            .await
            .unwrap()
            .expect("granted")
    };
    let call = receiver
        .wait_for("for the library's Acquire", |span| {
            hex(&span.trace_id) == LIBRARY_TRACE_ID && span.name == "/redlockd.v1.Lock/Acquire"
        })
        .await;
    assert_eq!(hex(&call.parent_span_id), CALLER_SPAN);
    assert_eq!(attributes(&call)["token"], lease.fencing_token().to_string());

    // Nothing of health; every span from the service "redlockd".
    let spans = receiver.spans();
    assert!(
        spans.iter().all(|(_, span)| !span.name.contains("grpc.health")),
        "{:?}",
        receiver.names()
    );
    assert!(spans.iter().all(|(service, _)| service == "redlockd"));
    serving.abort();
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
