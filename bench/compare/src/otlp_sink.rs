//! The OTLP/gRPC receiver the traced daemon of (a) and (b) exports to
//! (docs/tracing.md): the collector's TraceService from the
//! opentelemetry-proto definitions, in this process, counting the spans it
//! is sent and answering at once, so that the daemon's cost of tracing is
//! measured, not a collector's.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use tokio::task::JoinHandle;

/// The receiver; stopped on drop.
pub struct Sink {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    spans: Arc<AtomicU64>,
    serving: JoinHandle<()>,
}

#[derive(Clone)]
struct Counting(Arc<AtomicU64>);

#[tonic::async_trait]
impl TraceService for Counting {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans: usize = (request.get_ref().resource_spans.iter())
            .flat_map(|r| &r.scope_spans)
            .map(|s| s.spans.len())
            .sum();
        self.0.fetch_add(spans as u64, Ordering::Relaxed);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Sink {
    /// Serves on a free loopback port.
    pub async fn start() -> anyhow::Result<Sink> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let endpoint = format!("http://{}", listener.local_addr()?);
        let spans = Arc::new(AtomicU64::new(0));
        let service = TraceServiceServer::new(Counting(spans.clone())).max_decoding_message_size(64 << 20);
        let serving = tokio::spawn(async move {
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let served = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await;
            if let Err(e) = served {
                crate::say(format!("OTLP receiver: {e}"));
            }
        });
        Ok(Sink {
            endpoint,
            spans,
            serving,
        })
    }

    /// Spans received so far.
    pub fn spans(&self) -> u64 {
        self.spans.load(Ordering::Relaxed)
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.serving.abort();
    }
}
