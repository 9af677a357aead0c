//! Real Redis Clusters for the tests of cluster positions
//! (docs/design.md#cluster-positions): `redis-server --cluster-enabled yes`
//! processes on free loopback ports, joined by `redis-cli --cluster create`.

use std::process::Command;
use std::time::{Duration, Instant};

use redlockd::dev::{RedisProcess, find_redis_server, start_cluster_node};

use super::proxy::Proxy;

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
        let start_node = || {
            start_cluster_node(&binary, &["--cluster-node-timeout", "3000"])
                .unwrap_or_else(|e| panic!("starting a cluster node: {e}"))
        };
        let nodes: Vec<RedisProcess> = (0..primaries * (1 + replicas)).map(|_| start_node()).collect();
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
        cluster.until_ok();
        cluster
    }

    /// Waits until every node says `cluster_state:ok`.
    #[allow(
        clippy::disallowed_methods,
        reason = "waits on real redis-server processes, in real time"
    )]
    pub fn until_ok(&self) {
        let start = Instant::now();
        while !(self.nodes.iter()).all(|n| cli(n.port(), &["cluster", "info"]).contains("cluster_state:ok")) {
            assert!(start.elapsed() < Duration::from_secs(30), "the cluster never became ok");
            std::thread::sleep(Duration::from_millis(50));
        }
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

/// What `CLUSTER NODES` on a node says of itself: its id, whether it is a
/// primary, the primary it replicates (if any) and the slot ranges it
/// serves.
struct Myself {
    id: String,
    primary: bool,
    of: Option<String>,
    ranges: Vec<(u16, u16)>,
}

fn myself(port: u16) -> Myself {
    let nodes = cli(port, &["cluster", "nodes"]);
    let line = nodes
        .lines()
        .find(|l| l.contains("myself"))
        .expect("CLUSTER NODES names myself");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let ranges = fields[8..]
        .iter()
        .filter(|f| !f.starts_with('['))
        .map(|f| match f.split_once('-') {
            Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
            None => (f.parse().unwrap(), f.parse().unwrap()),
        })
        .collect();
    Myself {
        id: fields[0].to_owned(),
        primary: fields[2].contains("master"),
        of: (fields[3] != "-").then(|| fields[3].to_owned()),
        ranges,
    }
}

impl RedisCluster {
    /// The index (in `nodes`) of the primary serving `slot`.
    pub fn owner_of(&self, slot: u16) -> usize {
        (0..self.nodes.len())
            .find(|i| {
                let me = myself(self.nodes[*i].port());
                me.primary && me.ranges.iter().any(|(a, b)| (*a..=*b).contains(&slot))
            })
            .expect("every slot has a primary")
    }

    /// The slot ranges node `primary` serves now (none for a replica).
    pub fn ranges_of(&self, primary: usize) -> Vec<(u16, u16)> {
        myself(self.nodes[primary].port()).ranges
    }

    /// The index of a replica of primary `primary`.
    pub fn replica_of(&self, primary: usize) -> usize {
        let id = myself(self.nodes[primary].port()).id;
        (0..self.nodes.len())
            .find(|i| myself(self.nodes[*i].port()).of.as_deref() == Some(id.as_str()))
            .expect("the primary has a replica")
    }

    /// Writes the replica's data to its disk (`SAVE`): what a failover to
    /// it after `fail_over_losing_writes` comes back with.
    pub fn snapshot(&self, replica: usize) {
        assert_eq!(cli(self.nodes[replica].port(), &["save"]).trim(), "OK");
    }

    /// A failover that loses every write acknowledged since the replica's
    /// `snapshot`: the primary and the replica die (`kill -9`), the replica
    /// comes back with its snapshot and takes the primary's slots
    /// (`CLUSTER FAILOVER TAKEOVER`); the old primary stays down.
    #[allow(
        clippy::disallowed_methods,
        reason = "waits on real redis-server processes, in real time"
    )]
    pub fn fail_over_losing_writes(&mut self, primary: usize, replica: usize) {
        self.nodes[primary].kill();
        self.nodes[replica].kill();
        self.nodes[replica].restart().expect("restarting the replica");
        let port = self.nodes[replica].port();
        assert_eq!(cli(port, &["cluster", "failover", "takeover"]).trim(), "OK");
        let start = Instant::now();
        let others: Vec<u16> = (0..self.nodes.len())
            .filter(|i| *i != primary)
            .map(|i| self.nodes[i].port())
            .collect();
        while !(myself(port).primary
            && others
                .iter()
                .all(|p| cli(*p, &["cluster", "info"]).contains("cluster_state:ok")))
        {
            assert!(start.elapsed() < Duration::from_secs(30), "the takeover never settled");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl RedisCluster {
    /// `redis-cli --cluster reshard`: the first `slots` slots of primary
    /// `from` move to primary `to`, keys and all.
    pub fn reshard(&self, from: usize, to: usize, slots: u16) {
        let (source, target) = (myself(self.nodes[from].port()), myself(self.nodes[to].port()));
        let out = Command::new("redis-cli")
            .args(["--cluster", "reshard", &format!("127.0.0.1:{}", self.nodes[to].port())])
            .args(["--cluster-from", &source.id, "--cluster-to", &target.id])
            .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli");
        assert!(
            out.status.success(),
            "reshard: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

impl RedisCluster {
    /// `CLUSTER FAILOVER` on replica `replica` (the graceful kind: it
    /// catches up with its primary first, nothing is lost), then waits
    /// until it is a primary and every node says `cluster_state:ok`.
    #[allow(
        clippy::disallowed_methods,
        reason = "waits on real redis-server processes, in real time"
    )]
    pub fn fail_over(&self, replica: usize) {
        let port = self.nodes[replica].port();
        let start = Instant::now();
        // A manual failover waits for the replica's link to its primary
        // (a new replica may still be syncing) and gives up after 5 s.
        let mut asked: Option<Instant> = None;
        while !(myself(port).primary
            && (self.nodes.iter()).all(|n| cli(n.port(), &["cluster", "info"]).contains("cluster_state:ok")))
        {
            assert!(start.elapsed() < Duration::from_secs(30), "the failover never settled");
            let linked = cli(port, &["info", "replication"]).contains("master_link_status:up");
            if linked && asked.is_none_or(|at| at.elapsed() > Duration::from_secs(6)) {
                assert_eq!(cli(port, &["cluster", "failover"]).trim(), "OK");
                asked = Some(Instant::now());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl RedisCluster {
    /// A fault proxy in front of every node, announced to clients in the
    /// node's place (`CONFIG SET cluster-announce-port`; the cluster bus
    /// keeps its own port): once every node's slot map names the proxies,
    /// a daemon seeded with `url_via` reaches each node only through its
    /// proxy. Returns the proxies in node order.
    pub async fn behind_proxies(&self) -> Vec<Proxy> {
        let mut proxies = Vec::new();
        for node in &self.nodes {
            let proxy = Proxy::start(([127, 0, 0, 1], node.port()).into()).await;
            let port = proxy.addr().port().to_string();
            assert_eq!(
                cli(node.port(), &["config", "set", "cluster-announce-port", &port]).trim(),
                "OK"
            );
            proxies.push(proxy);
        }
        let start = tokio::time::Instant::now();
        let named = |port: u16| {
            let slots = cli(port, &["cluster", "slots"]);
            (proxies.iter()).all(|p| slots.contains(&p.addr().port().to_string()))
                && !(self.nodes.iter()).any(|n| slots.lines().any(|l| l.trim() == n.port().to_string()))
        };
        while !self.nodes.iter().all(|n| named(n.port())) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the proxies were never announced"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        proxies
    }
}

/// `redis-cluster://…` naming the proxies of a cluster's primaries.
pub fn url_via(cluster: &RedisCluster, proxies: &[Proxy]) -> String {
    let seeds: Vec<String> = (proxies[..cluster.primaries].iter())
        .map(|p| p.addr().to_string())
        .collect();
    format!("redis-cluster://{}", seeds.join(","))
}
