//! The metrics hear the algorithm: `telemetry::Metrics` as the
//! `redlock::Observer` of every master and of the monitor.

use std::time::Duration;

use crate::redlock::observer::Observer;
use crate::redlock::standing::{Check, Standing};
use crate::telemetry::metrics::Metrics;

impl Observer for Metrics {
    fn node_request(&self, node: usize, took: Duration, ok: bool) {
        Metrics::node_request(self, node, took, ok);
    }

    fn node_not_awaited(&self, node: usize) {
        Metrics::node_not_awaited(self, node);
    }

    fn probe_timed_out(&self, node: usize) {
        Metrics::probe_timed_out(self, node);
    }

    fn node_buckets_out(&self, node: usize, out: usize) {
        Metrics::node_buckets_out(self, node, out);
    }

    fn node_standing(&self, node: usize, standing: &Standing) {
        let failed = match standing {
            Standing::Failed { check, .. } => Some(check.as_str()),
            _ => None,
        };
        let checks = Check::ALL.map(Check::as_str);
        Metrics::node_standing(self, node, standing.label(), &checks, failed);
    }
}

#[cfg(test)]
mod tests {
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
}
