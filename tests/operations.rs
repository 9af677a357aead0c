//! Running it: gRPC health follows the quorum, server reflection lists the
//! services (so grpcurl-style tools work without the .proto).

mod support;

use std::time::Duration;

use support::*;
use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

#[tokio::test]
async fn health_is_serving_only_while_a_quorum_of_masters_is_usable() {
    let mut cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    assert_eq!(daemon.health(redlockd::SERVICE_NAME).await, ServingStatus::Serving);
    for i in 0..2 {
        cluster.masters[i].kill();
    }
    // Two of five down: still a quorum.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    cluster.masters[2].kill();
    daemon.until_health(ServingStatus::NotServing).await;
    // Liveness does not follow Redis: the process is alive.
    assert_eq!(daemon.health("liveness").await, ServingStatus::Serving);
    for i in 0..3 {
        cluster.masters[i].restart().unwrap();
    }
    daemon.until_health(ServingStatus::Serving).await;
    daemon.stop().await;
}

#[tokio::test]
async fn server_reflection_lists_the_lock_and_health_services() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut reflection = ServerReflectionClient::new(daemon.channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies = reflection
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = reply.message_response else {
        panic!("unexpected reply {reply:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"redlockd.v1.Lock".to_owned()), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health".to_owned()), "{names:?}");
    daemon.stop().await;
}

/// The value of one series in a scrape (`name{labels} value`).
fn series(scrape: &str, name_and_labels: &str) -> f64 {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(name_and_labels).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name_and_labels} in:\n{scrape}"))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn metrics_count_real_traffic() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut client = daemon.client().await;
    for i in 0..3 {
        let lease = must_acquire(&mut client, &format!("m{i}"), 5.0, 0.0).await;
        let refused = try_acquire(&mut client, &format!("m{i}"), 5.0, 0.0).await;
        assert!(!refused.acquired);
        assert!(release(&mut client, &lease).await);
    }
    let held = must_acquire(&mut client, "still-held", 5.0, 0.0).await;
    let scrape = daemon.scrape().await;
    assert_eq!(series(&scrape, r#"redlock_acquire_total{status="success"}"#), 4.0);
    assert_eq!(series(&scrape, r#"redlock_acquire_total{status="fail"}"#), 3.0);
    assert_eq!(
        series(&scrape, r#"redlock_acquire_failures_total{reason="taken"}"#),
        3.0
    );
    assert_eq!(series(&scrape, r#"redlock_release_total{status="success"}"#), 3.0);
    assert_eq!(series(&scrape, "redlock_hold_time_seconds_count"), 3.0);
    assert_eq!(series(&scrape, "redlock_acquire_duration_seconds_count"), 7.0);
    assert_eq!(series(&scrape, "redlock_locks_held"), 1.0);
    assert_eq!(series(&scrape, "redlock_sessions"), 0.0);
    // Every master answered every round: 7 acquires + 3 releases each.
    for node in 0..5 {
        let count = series(
            &scrape,
            &format!(r#"redlock_node_request_duration_seconds_count{{node="{node}"}}"#),
        );
        assert!(count >= 10.0, "node {node}: {count}");
    }
    assert!(
        !scrape.contains("m0") && !scrape.contains("still-held"),
        "a resource name leaked into a label"
    );
    assert!(release(&mut client, &held).await);
    daemon.stop().await;
}
