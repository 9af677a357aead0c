//! Metrics wiring (docs/design.md#quarantine): every master exported as
//! unverified before its first probe.

use std::collections::HashMap;

use std::sync::Arc;
use std::time::Duration;

use crate::app::settings;
use crate::config::Config;
use crate::redis::node::RedisNode;
use crate::redlock::Engine;
use crate::redlock::monitor::Monitor;
use crate::telemetry::metrics::Metrics;

#[tokio::test]
async fn every_master_is_exported_as_unverified_before_its_first_probe() {
    // Closed ports: nothing ever answers, and no probe runs here.
    let nodes: Vec<String> = (0..3)
        .map(|_| {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            format!("redis://127.0.0.1:{port}")
        })
        .collect();
    let env = HashMap::from([("REDLOCKD__REDIS__NODES".to_string(), nodes.join(","))]);
    let config = Config::load(None, Some(env)).unwrap();
    let redis_nodes = nodes
        .iter()
        .map(|url| RedisNode::connect(&settings::node(&config, url, None)).unwrap())
        .collect();
    let engine = Arc::new(Engine::new(redis_nodes, settings::engine(&config)));
    let metrics = Arc::new(Metrics::new());
    let _monitor = Monitor::new(
        engine,
        metrics.clone(),
        settings::rules(&config),
        Duration::from_secs(1),
        Duration::from_secs(1),
    );
    let text = String::from_utf8(metrics.render()).unwrap();
    for node in 0..3 {
        let series = format!("redlock_node_state{{node=\"{node}\",state=\"unverified\"}} 1");
        assert!(text.contains(&series), "no {series} in:\n{text}");
    }
}
