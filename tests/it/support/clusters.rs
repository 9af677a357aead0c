//! Real Redis Clusters for the tests of cluster positions
//! (docs/design.md#cluster-positions): `redis-server --cluster-enabled yes`
//! processes on free loopback ports, joined by `redis-cli --cluster create`.

use std::process::Command;
use std::time::{Duration, Instant};

use redlockd::dev::{RedisProcess, find_redis_server, free_port};

/// One Redis Cluster: its primaries first, then any replicas.
pub struct RedisCluster {
    pub nodes: Vec<RedisProcess>,
    pub primaries: usize,
}

impl RedisCluster {
    /// A cluster of `primaries` primaries with `replicas` replicas each,
    /// every slot assigned, `cluster_state:ok` on every node.
    #[allow(
        clippy::disallowed_methods,
        reason = "waits on real redis-server processes, in real time"
    )]
    pub fn start(primaries: usize, replicas: usize) -> RedisCluster {
        let binary = find_redis_server().expect("redis-server is needed: run scripts/test, which installs it");
        let nodes: Vec<RedisProcess> = (0..primaries * (1 + replicas))
            .map(|_| {
                let bus = free_port().unwrap().to_string();
                let args = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-port",
                    &bus,
                    "--cluster-node-timeout",
                    "3000",
                ];
                RedisProcess::start(&binary, &args).expect("starting a cluster node")
            })
            .collect();
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        create.args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port())));
        create.args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"]);
        let out = create
            .output()
            .expect("redis-cli is needed: run scripts/test, which installs it");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let cluster = RedisCluster { nodes, primaries };
        let start = Instant::now();
        while !cluster
            .nodes
            .iter()
            .all(|n| cli(n.port(), &["cluster", "info"]).contains("cluster_state:ok"))
        {
            assert!(start.elapsed() < Duration::from_secs(30), "the cluster never became ok");
            std::thread::sleep(Duration::from_millis(50));
        }
        cluster
    }

    /// `redis-cluster://127.0.0.1:<port>,…` naming every primary.
    pub fn url(&self) -> String {
        let seeds: Vec<String> = (self.nodes[..self.primaries].iter())
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        format!("redis-cluster://{}", seeds.join(","))
    }
}

/// `redis-cli -p <port> <args…>`, its output.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `n` clusters of `primaries` primaries each, started at once.
pub fn start_clusters(n: usize, primaries: usize, replicas: usize) -> Vec<RedisCluster> {
    let starts: Vec<_> = (0..n)
        .map(|_| std::thread::spawn(move || RedisCluster::start(primaries, replicas)))
        .collect();
    starts
        .into_iter()
        .map(|s| s.join().expect("a cluster failed to start"))
        .collect()
}
