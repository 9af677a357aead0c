//! Running it: gRPC health follows the quorum, server reflection lists the
//! services (so grpcurl-style tools work without the .proto).

use crate::support;

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
    assert_eq!(
        daemon.health(redlockd::api::health::SERVICE_NAME).await,
        ServingStatus::Serving
    );
    for i in 0..2 {
        cluster.kill(i);
    }
    // Two of five down: still a quorum.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    cluster.kill(2);
    daemon.until_health(ServingStatus::NotServing).await;
    // Liveness does not follow Redis: the process is alive.
    assert_eq!(daemon.health("liveness").await, ServingStatus::Serving);
    for i in 0..3 {
        cluster.restart(i);
    }
    daemon.until_health(ServingStatus::Serving).await;
    daemon.stop().await;
}

/// The value of counter `series` (with its labels) in a scrape, 0 if absent.
fn counter(scraped: &str, series: &str) -> u64 {
    scraped
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_usable_master_is_marked_out_at_its_second_timed_out_probe_in_a_row_and_back_once_it_answers() {
    use support::proxy::{Mode, Proxy};
    let cluster = Cluster::start(5);
    let proxy = Proxy::start(([127, 0, 0, 1], cluster.masters[0].port()).into()).await;
    let mut urls: Vec<String> = cluster.masters.iter().map(|m| m.url()).collect();
    urls[0] = proxy.url();
    let mut env = test_env(&cluster);
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    // A probe times out after 500 ms: a scrape every 50 ms sees the state
    // between the first timeout and the second.
    env.insert("REDLOCKD__REDIS__COMMAND_TIMEOUT".into(), "500ms".into());
    env.insert("REDLOCKD__SAFETY__CHECK_INTERVAL".into(), "1s".into());
    let daemon = Daemon::start_with(env).await;
    daemon.until_usable(5).await;
    // Master 0 stops answering (its connection stays open, as under a
    // probe queued behind lock traffic, or a fork).
    proxy.set_mode(Mode::Blackhole);
    let timeouts = "redlock_node_probe_timeouts_total{node=\"0\"}";
    let usable = "redlock_node_state{node=\"0\",state=\"usable\"} 1";
    let mut first = None;
    for _ in 0..100 {
        let scraped = daemon.scrape().await;
        if counter(&scraped, timeouts) >= 1 {
            first = Some(scraped);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let first = first.expect("no probe of master 0 timed out within 5 s");
    // The counter goes up before a probe's verdict: a scrape that shows one
    // timeout shows the standing that timeout left.
    if counter(&first, timeouts) == 1 {
        assert!(
            first.contains(usable),
            "one timed-out probe marked master 0 out:\n{first}"
        );
    }
    // The second in a row marks it out.
    let second = daemon
        .scrape_until(&["redlock_node_state{node=\"0\",state=\"unverified\"} 1"])
        .await;
    assert!(
        counter(&second, timeouts) >= 2,
        "marked out after fewer than two timeouts:\n{second}"
    );
    // Answering again, it is usable again (no reconnect happened, so no
    // quarantine: quarantine is off here anyway).
    proxy.set_mode(Mode::Pass);
    daemon.scrape_until(&[usable]).await;
    daemon.stop().await;
}

#[tokio::test]
async fn answers_a_round_did_not_wait_for_and_timeouts_are_counted_per_master() {
    use support::proxy::{Mode, Proxy};
    let cluster = Cluster::start(5);
    let mut proxies = Vec::new();
    for master in &cluster.masters {
        proxies.push(Proxy::start(([127, 0, 0, 1], master.port()).into()).await);
    }
    let env = support::rig::rig_env(&cluster, &proxies, &[("REDLOCKD__SAFETY__QUARANTINE", "false")]);
    let daemon = Daemon::start_with(env).await;
    // Masters 3 and 4 must be in every round counted below.
    daemon.until_usable(5).await;
    let mut client = daemon.client().await;
    // Master 4 answers in ~20 ms, well within the 100 ms node timeout (also
    // for a release queued behind the last one): the other four decide each
    // acquisition first, and each release too, but a release's answer is
    // still recorded when it comes.
    let slow = Mode::Delay {
        base: Duration::from_millis(10),
        jitter: Duration::ZERO,
    };
    proxies[4].set_mode(slow);
    for i in 0..5 {
        let lease = must_acquire(&mut client, &format!("slow{i}"), 1.0, 0.0).await;
        assert!(release(&mut client, &lease).await);
    }
    // Master 3 goes silent: each release to it (queued behind the first)
    // fails when the command times out (1 s), after its answer was given.
    proxies[3].set_mode(Mode::Blackhole);
    for i in 0..2 {
        let lease = must_acquire(&mut client, &format!("silent{i}"), 1.0, 0.0).await;
        assert!(release(&mut client, &lease).await);
    }
    let not_awaited = |scrape: &str, node: usize| {
        series_or_zero(
            scrape,
            &format!(r#"redlock_node_requests_not_awaited_total{{node="{node}"}}"#),
        )
    };
    let errors =
        |scrape: &str, node: usize| series_or_zero(scrape, &format!(r#"redlock_node_errors_total{{node="{node}"}}"#));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let scrape = loop {
        let scrape = daemon.scrape().await;
        if errors(&scrape, 3) >= 2.0 || tokio::time::Instant::now() >= deadline {
            break scrape;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (not_awaited, errors) = (|node| not_awaited(&scrape, node), |node| errors(&scrape, node));
    assert!(not_awaited(4) >= 5.0, "master 4: {} not awaited", not_awaited(4));
    assert!(errors(3) >= 2.0, "master 3: {} errors", errors(3));
    // Master 4's releases were answered within the node timeout.
    assert_eq!(errors(4), 0.0, "master 4's late-awaited releases counted as failing");
    assert_eq!(
        errors(0) + errors(1) + errors(2),
        0.0,
        "healthy masters counted as failing"
    );
    proxies[3].set_mode(Mode::Pass);
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

#[tokio::test]
async fn server_reflection_also_speaks_v1alpha_for_older_tools() {
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest as Request;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient as Client;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest as Ask;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse as Answer;
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let mut reflection = Client::new(daemon.channel().await);
    let asks = [
        Request {
            host: String::new(),
            message_request: Some(Ask::ListServices(String::new())),
        },
        Request {
            host: String::new(),
            message_request: Some(Ask::FileContainingSymbol("redlockd.v1.Lock".into())),
        },
    ];
    let mut replies = reflection
        .server_reflection_info(tokio_stream::iter(asks))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().unwrap();
    let Some(Answer::ListServicesResponse(list)) = reply.message_response else {
        panic!("unexpected reply {reply:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"redlockd.v1.Lock".to_owned()), "{names:?}");
    let reply = replies.message().await.unwrap().unwrap();
    let Some(Answer::FileDescriptorResponse(files)) = reply.message_response else {
        panic!("unexpected reply {reply:?}");
    };
    assert!(!files.file_descriptor_proto.is_empty());
    daemon.stop().await;
}

#[tokio::test]
async fn the_scrape_has_the_process_series_and_the_build_version() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    let scrape = daemon.scrape().await;
    // Present (`series` panics otherwise); CPU seconds are whole seconds,
    // so a young process may show 0.
    assert!(series(&scrape, "process_cpu_seconds_total") >= 0.0);
    for name in [
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    ] {
        assert!(series(&scrape, name) > 0.0, "{name}");
    }
    let version = format!("redlockd_build_info{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"));
    assert_eq!(series(&scrape, &version), 1.0);
    // Before any traffic, every outcome's and every master's series is there, at 0.
    for present in [
        "redlock_acquire_total{status=\"error\"}",
        "redlock_release_total{status=\"success\"}",
        "redlock_acquire_failures_total{reason=\"no_quorum\"}",
        "redlock_node_errors_total{node=\"4\"}",
        "redlock_node_probe_timeouts_total{node=\"0\"}",
    ] {
        assert_eq!(series(&scrape, present), 0.0, "{present}");
    }
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

/// Like `series`, but a series never touched (absent) is 0.
fn series_or_zero(scrape: &str, name_and_labels: &str) -> f64 {
    if scrape.contains(name_and_labels) {
        series(scrape, name_and_labels)
    } else {
        0.0
    }
}

#[tokio::test]
async fn metrics_count_real_traffic() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    // Every master asked in every round: each verified first.
    daemon.until_usable(5).await;
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
    // Every master was asked in every round (7 acquires + 3 releases); a
    // round decided early by the others leaves its answer not awaited. A
    // release answered at quorum is counted when the slower masters' own
    // answers come (docs/design.md#batching): scrape again until they have.
    let counted = |scrape: &str, node: usize| {
        let timed = series(
            scrape,
            &format!(r#"redlock_node_request_duration_seconds_count{{node="{node}"}}"#),
        );
        let not_awaited = series_or_zero(
            scrape,
            &format!(r#"redlock_node_requests_not_awaited_total{{node="{node}"}}"#),
        );
        timed + not_awaited
    };
    let mut scrape = scrape;
    for _ in 0..50 {
        if (0..5).all(|node| counted(&scrape, node) >= 10.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        scrape = daemon.scrape().await;
    }
    let mut answered = 0.0;
    for node in 0..5 {
        let timed = series(
            &scrape,
            &format!(r#"redlock_node_request_duration_seconds_count{{node="{node}"}}"#),
        );
        let not_awaited = series_or_zero(
            &scrape,
            &format!(r#"redlock_node_requests_not_awaited_total{{node="{node}"}}"#),
        );
        assert!(
            timed + not_awaited >= 10.0,
            "node {node}: {timed} answered, {not_awaited} not awaited"
        );
        answered += timed;
    }
    // A quorum answered every round.
    assert!(answered >= 30.0, "{answered} answers in 10 rounds");
    assert!(
        !scrape.contains("m0") && !scrape.contains("still-held"),
        "a resource name leaked into a label"
    );
    assert!(release(&mut client, &held).await);
    daemon.stop().await;
}
