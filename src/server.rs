//! The gRPC service: translates `redlockd.v1` messages to engine calls and
//! back, and nothing else. Validation is in `validate`, the status mapping
//! in `error`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use crate::error::Error;
use crate::proto::lock_server::Lock;
use crate::proto::{
    AcquireRequest, AcquireResponse, ExtendRequest, ExtendResponse, FailureReason as WireReason, Lease as WireLease,
    ReleaseRequest, ReleaseResponse,
};
use crate::redlock::{Acquired, Engine, FailureReason, Lease, Node};
use crate::validate::{self, Limits};

/// The `redlockd.v1.Lock` service over an engine.
pub struct LockService<N> {
    engine: Arc<Engine<N>>,
    limits: Limits,
    /// Time kept back from a client deadline to finish the last attempt
    /// (two rounds and a release) and answer before the client gives up.
    deadline_slack: Duration,
}

impl<N: Node> LockService<N> {
    /// A service over `engine`, checking requests against `limits`.
    pub fn new(engine: Arc<Engine<N>>, limits: Limits, node_timeout: Duration) -> LockService<N> {
        LockService {
            engine,
            limits,
            deadline_slack: node_timeout * 3,
        }
    }

    async fn acquire(&self, deadline: Option<Duration>, req: AcquireRequest) -> Result<AcquireResponse, Error> {
        validate::resource(&req.resource)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let wait = self.limits.wait(req.wait)?;
        validate::owner(&req.owner)?;
        // A client deadline shorter than the wait (plus time to answer)
        // bounds the wait.
        let budget = deadline.map(|d| d.saturating_sub(self.deadline_slack));
        let cut_by_deadline = budget.is_some_and(|b| b < wait);
        let wait = budget.map_or(wait, |b| b.min(wait));

        // The attempt runs in its own task: if the client goes away, the
        // wait stops and a lock granted meanwhile is released, never leaked.
        let (mut tx, rx) = oneshot::channel();
        let engine = self.engine.clone();
        let resource = req.resource;
        let owner = req.owner;
        tokio::spawn(async move {
            let outcome = engine.acquire(&resource, ttl, wait, tx.closed()).await;
            if let Ok(Acquired::Granted(lease)) = &outcome {
                tracing::debug!(%resource, %owner, token = lease.fencing_token, validity = ?lease.validity, "granted");
            }
            if let Err(Ok(Acquired::Granted(lease))) = tx.send(outcome) {
                tracing::info!(%resource, "client left before its lock was granted; releasing it");
                let _ = engine.release(&lease.resource, &lease.value).await;
            }
        });
        let outcome = rx
            .await
            .map_err(|_| Error::Internal("the acquire task failed".into()))??;
        Ok(match outcome {
            Acquired::Granted(lease) => AcquireResponse {
                acquired: true,
                lease: Some(wire_lease(lease)),
                reason: WireReason::Unspecified.into(),
                attempts: 0,
            },
            Acquired::NotGranted { .. } if cut_by_deadline => return Err(Error::DeadlineExceeded),
            Acquired::NotGranted { reason, attempts } => AcquireResponse {
                acquired: false,
                lease: None,
                reason: wire_reason(reason).into(),
                attempts,
            },
        })
    }

    async fn extend(&self, req: ExtendRequest) -> Result<ExtendResponse, Error> {
        validate::resource(&req.resource)?;
        let value = validate::value(&req.value)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let validity = self.engine.extend(&req.resource, &value, ttl).await?;
        Ok(ExtendResponse {
            extended: validity.is_some(),
            validity: validity.map(wire_duration),
        })
    }

    async fn release(&self, req: ReleaseRequest) -> Result<ReleaseResponse, Error> {
        validate::resource(&req.resource)?;
        let value = validate::value(&req.value)?;
        let released = self.engine.release(&req.resource, &value).await?;
        Ok(ReleaseResponse { released })
    }
}

#[tonic::async_trait]
impl<N: Node> Lock for LockService<N> {
    async fn acquire(&self, request: Request<AcquireRequest>) -> Result<Response<AcquireResponse>, Status> {
        let deadline = grpc_timeout(request.metadata());
        let reply = LockService::acquire(self, deadline, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    async fn extend(&self, request: Request<ExtendRequest>) -> Result<Response<ExtendResponse>, Status> {
        Ok(Response::new(LockService::extend(self, request.into_inner()).await?))
    }

    async fn release(&self, request: Request<ReleaseRequest>) -> Result<Response<ReleaseResponse>, Status> {
        Ok(Response::new(LockService::release(self, request.into_inner()).await?))
    }
}

fn wire_lease(lease: Lease) -> WireLease {
    WireLease {
        resource: lease.resource,
        value: lease.value.expose().to_owned(),
        fencing_token: lease.fencing_token,
        validity: Some(wire_duration(lease.validity)),
    }
}

fn wire_reason(reason: FailureReason) -> WireReason {
    match reason {
        FailureReason::Taken => WireReason::Taken,
        FailureReason::ValidityUsedUp => WireReason::ValidityUsedUp,
    }
}

fn wire_duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration::try_from(d).unwrap_or(prost_types::Duration {
        seconds: i64::MAX,
        nanos: 0,
    })
}

/// The client's deadline from the `grpc-timeout` header ("100m" = 100 ms),
/// as the gRPC-over-HTTP/2 spec writes it.
fn grpc_timeout(metadata: &MetadataMap) -> Option<Duration> {
    let raw = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = raw.split_at(raw.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_are_read_in_every_unit() {
        let cases = [
            ("2H", Some(Duration::from_secs(7200))),
            ("3M", Some(Duration::from_secs(180))),
            ("4S", Some(Duration::from_secs(4))),
            ("250m", Some(Duration::from_millis(250))),
            ("7u", Some(Duration::from_micros(7))),
            ("9n", Some(Duration::from_nanos(9))),
            ("9x", None),
            ("m", None),
        ];
        for (raw, want) in cases {
            let mut metadata = MetadataMap::new();
            metadata.insert("grpc-timeout", raw.parse().unwrap());
            assert_eq!(grpc_timeout(&metadata), want, "{raw}");
        }
    }
}
