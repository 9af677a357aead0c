//! Redis Clusters as redlockd's positions (`--cluster-primaries N`): five
//! clusters of N primaries each, joined by `redis-cli --cluster create`
//! (docs/design.md#cluster-positions). rslock and node-redlock keep the five
//! standalone masters; the report's Redis CPU for redlockd is then every
//! primary's.

use std::process::Command;
use std::time::Duration;

use redlockd::dev::{RedisProcess, find_redis_server, start_cluster_node};

/// The clusters' servers and one `redis-cluster://` URL per cluster.
pub struct Clusters {
    pub nodes: Vec<RedisProcess>,
    pub urls: Vec<String>,
}

/// Starts `positions` clusters of `primaries` primaries each, every slot
/// assigned and `cluster_state:ok` on every node.
///
/// # Errors
/// When a server does not start or a cluster does not form.
pub fn start(positions: usize, primaries: usize) -> Result<Clusters, String> {
    let binary = find_redis_server().map_err(|e| e.to_string())?;
    let mut clusters = Clusters {
        nodes: Vec::new(),
        urls: Vec::new(),
    };
    for _ in 0..positions {
        let mut ports = Vec::new();
        for _ in 0..primaries {
            // A lone primary never learns its own address from a peer.
            let announce = ["--cluster-announce-ip", "127.0.0.1"];
            let node = start_cluster_node(&binary, &announce).map_err(|e| format!("starting a cluster node: {e}"))?;
            ports.push(node.port());
            clusters.nodes.push(node);
        }
        let seeds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        // `--cluster create` wants three primaries at least; one takes
        // every slot itself.
        let mut create = Command::new("redis-cli");
        match ports[..] {
            [one] => create.args(["-p", &one.to_string(), "cluster", "addslotsrange", "0", "16383"]),
            _ => (create.args(["--cluster", "create"]).args(&seeds)).args(["--cluster-replicas", "0", "--cluster-yes"]),
        };
        let out = create.output().map_err(|e| format!("redis-cli: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "redis-cli --cluster create: {}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        until_ok(&ports)?;
        clusters.urls.push(format!("redis-cluster://{}", seeds.join(",")));
    }
    Ok(clusters)
}

#[allow(
    clippy::disallowed_methods,
    reason = "waits on real redis-server processes, in real time"
)]
fn until_ok(ports: &[u16]) -> Result<(), String> {
    let start = std::time::Instant::now();
    let ok = |port: &u16| {
        Command::new("redis-cli")
            .args(["-p", &port.to_string(), "cluster", "info"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
    };
    while !ports.iter().all(ok) {
        if start.elapsed() > Duration::from_secs(30) {
            return Err("a cluster never became ok".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}
