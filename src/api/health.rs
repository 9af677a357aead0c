//! `grpc.health.v1` (docs/operations.md#health): SERVING only while a quorum of masters is
//! usable, NOT_SERVING otherwise and from the first moment of shutdown, for
//! the whole server ("") and for `redlockd.v1.Lock`.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{Mutex, watch};
use tonic_health::ServingStatus;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};

/// The gRPC name of the lock service.
pub const SERVICE_NAME: &str = "redlockd.v1.Lock";
/// A health "service" that is SERVING while the process serves gRPC, for
/// liveness probes: unlike the lock service it does not follow Redis, so a
/// Redis outage does not get every sidecar restarted.
pub const LIVENESS: &str = "liveness";

/// The daemon's health, as reported to probes.
pub struct Health {
    reporter: HealthReporter,
    /// Held while a status is set, so shutdown's NOT_SERVING is the last.
    shutting_down: Mutex<bool>,
}

impl Health {
    /// The health state; `api::serve` serves it.
    pub fn new() -> Arc<Health> {
        let reporter = HealthReporter::new();
        let live = reporter.clone();
        tokio::spawn(async move { live.set_service_status(LIVENESS, ServingStatus::Serving).await });
        let health = Health {
            reporter,
            shutting_down: Mutex::new(false),
        };
        Arc::new(health)
    }

    /// The `grpc.health.v1.Health` service that serves it.
    pub(super) fn service(&self) -> HealthServer<HealthService> {
        HealthServer::new(HealthService::from_health_reporter(self.reporter.clone()))
    }

    async fn set(&self, serving: bool) {
        let status = if serving {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        self.reporter.set_service_status("", status).await;
        self.reporter.set_service_status(SERVICE_NAME, status).await;
    }

    /// Follows the count of usable masters until `stop` resolves.
    pub async fn follow(
        self: Arc<Self>,
        mut usable: watch::Receiver<usize>,
        quorum: usize,
        stop: impl Future<Output = ()>,
    ) {
        let report = async {
            loop {
                let serving = *usable.borrow_and_update() >= quorum;
                {
                    let shutting_down = self.shutting_down.lock().await;
                    if *shutting_down {
                        return;
                    }
                    self.set(serving).await;
                }
                if usable.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            () = report => {}
            () = stop => {}
        }
    }

    /// NOT_SERVING from now on: probes stop sending traffic here.
    pub async fn shut_down(&self) {
        let mut shutting_down = self.shutting_down.lock().await;
        *shutting_down = true;
        self.set(false).await;
    }
}
