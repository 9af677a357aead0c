//! Test harness: real `redis-server` masters on free loopback ports, the
//! daemon served in-process on port 0, and gRPC clients.

pub mod certs;
pub mod clusters;
pub mod history;
pub mod hold;
pub mod http;
pub mod http_lines;
pub mod keys;
pub mod proxy;
pub mod redis_node;
pub mod rig;
mod rig_liveness;
mod rig_sets;
pub mod stores;
pub mod tenants;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use fred::prelude::{Client, ClientLike, Config as FredConfig, KeysInterface};
use redlockd::config::Config;
use redlockd::dev::{RedisProcess, find_redis_server};
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{AcquireRequest, AcquireResponse, Lease, ReleaseRequest};
use tokio::sync::oneshot;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
pub use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Five (or n) independent positions, killed on drop: standalone masters,
/// or, when `REDLOCKD_TEST_POSITIONS=clusters` (scripts/test runs the core
/// suites so once more), Redis Clusters of three primaries each
/// (docs/design.md#cluster-positions). Tests that reach a position through
/// a fault proxy or by a master's port use `masters` (standalone only);
/// the rest go by `kill`, `restart`, `admin` and `fence`, which serve both.
pub struct Cluster {
    pub masters: Vec<RedisProcess>,
    clusters: Vec<clusters::RedisCluster>,
}

/// Whether this run's positions are Redis Clusters.
pub fn positions_are_clusters() -> bool {
    std::env::var("REDLOCKD_TEST_POSITIONS").is_ok_and(|v| v == "clusters")
}

impl Cluster {
    pub fn start(n: usize) -> Cluster {
        if positions_are_clusters() {
            let clusters = clusters::start_clusters(n, 3, 0);
            return Cluster {
                masters: Vec::new(),
                clusters,
            };
        }
        let binary = find_redis_server().expect("redis-server is needed: run scripts/test, which installs it");
        let masters = (0..n)
            .map(|_| RedisProcess::start(&binary, &[]).expect("starting redis-server"))
            .collect();
        Cluster {
            masters,
            clusters: Vec::new(),
        }
    }

    /// Standalone masters already started (or none: a daemon on
    /// positions of another kind).
    pub fn of(masters: Vec<RedisProcess>) -> Cluster {
        Cluster {
            masters,
            clusters: Vec::new(),
        }
    }

    pub fn urls(&self) -> String {
        let urls: Vec<String> = if self.clusters.is_empty() {
            self.masters.iter().map(RedisProcess::url).collect()
        } else {
            self.clusters.iter().map(clusters::RedisCluster::url).collect()
        };
        urls.join(",")
    }

    /// Kills position `i` (every node of a cluster).
    pub fn kill(&mut self, i: usize) {
        match self.clusters.get_mut(i) {
            Some(cluster) => cluster.nodes.iter_mut().for_each(RedisProcess::kill),
            None => self.masters[i].kill(),
        }
    }

    /// Starts position `i` again, empty (a cluster's nodes keep their
    /// slots: their cluster config file is kept), and waits until it
    /// serves.
    pub fn restart(&mut self, i: usize) {
        match self.clusters.get_mut(i) {
            Some(cluster) => {
                for node in &mut cluster.nodes {
                    node.restart().expect("restarting a cluster node");
                }
                cluster.until_ok();
            }
            None => self.masters[i].restart().expect("restarting a master"),
        }
    }

    /// A plain client to position `i`, for looking at keys (a clustered
    /// client on a cluster).
    pub async fn admin(&self, i: usize) -> Client {
        let config = match self.clusters.get(i) {
            Some(cluster) => FredConfig {
                server: fred::types::config::ServerConfig::new_clustered(
                    (cluster.nodes.iter())
                        .map(|n| ("127.0.0.1".to_owned(), n.port()))
                        .collect::<Vec<_>>(),
                ),
                ..FredConfig::default()
            },
            None => FredConfig::from_url(&self.masters[i].url()).unwrap(),
        };
        let client = Client::new(config, None, None, None);
        client.init().await.expect("connecting to a position");
        client
    }

    /// Position `i`'s clock (`TIME`), in microseconds.
    pub async fn clock_us(&self, i: usize) -> u64 {
        let admin = self.admin(i).await;
        let time = fred::types::CustomCommand::new_static("TIME", fred::types::ClusterHash::Random, false);
        let reply: Vec<u64> = admin.custom(time, Vec::<String>::new()).await.unwrap();
        let _ = admin.quit().await;
        reply[0] * 1_000_000 + reply[1]
    }

    /// `CONFIG SET key value` on master `i` (standalone masters only).
    pub async fn config_set(&self, i: usize, key: &str, value: &str) {
        let client = self.admin(i).await;
        let config = fred::types::CustomCommand::new_static("CONFIG", fred::types::ClusterHash::FirstKey, false);
        let _: fred::prelude::Value = client.custom(config, vec!["SET", key, value]).await.unwrap();
        let _ = client.quit().await;
    }

    /// The raw fence counter stored on master `i` for the bucket of the
    /// lock on `resource`.
    pub async fn fence(&self, i: usize, resource: &str) -> Option<String> {
        let client = self.admin(i).await;
        let value: Option<String> = client.get(keys::fence(&format!("lock:{resource}"))).await.unwrap();
        let _ = client.quit().await;
        value
    }

    /// Sets every master's fence counter for the bucket of the lock on
    /// `resource` to `counter`.
    pub async fn set_fence(&self, resource: &str, counter: u64) {
        for i in 0..self.masters.len().max(self.clusters.len()) {
            let client = self.admin(i).await;
            let key = keys::fence(&format!("lock:{resource}"));
            let _: () = client.set(key, counter, None, None, false).await.unwrap();
            let _ = client.quit().await;
        }
    }
}

/// A daemon served in-process on an ephemeral port.
pub struct Daemon {
    pub addr: SocketAddr,
    pub metrics_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

/// Settings that keep tests steady on a loaded 2-core machine: a generous
/// per-node timeout, short TTLs allowed, quick retries.
pub fn test_env(cluster: &Cluster) -> HashMap<String, String> {
    HashMap::from(
        [
            ("REDLOCKD__REDIS__NODES", cluster.urls()),
            ("REDLOCKD__REDIS__NODE_TIMEOUT", "100ms".into()),
            ("REDLOCKD__LOCK__MIN_TTL", "500ms".into()),
            ("REDLOCKD__LOCK__RETRY_DELAY_MIN", "20ms".into()),
            ("REDLOCKD__LOCK__RETRY_DELAY_MAX", "60ms".into()),
            // Fresh masters: quarantine would hold them out for max_ttl.
            ("REDLOCKD__SAFETY__QUARANTINE", "false".into()),
            ("REDLOCKD__SAFETY__CHECK_INTERVAL", "200ms".into()),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    )
}

/// `test_env` with `extra` settings on top.
pub fn env_with(cluster: &Cluster, extra: &[(&str, String)]) -> HashMap<String, String> {
    let mut env = test_env(cluster);
    for (key, value) in extra {
        env.insert((*key).to_owned(), value.clone());
    }
    env
}

/// `test_env` with masters `from..` reached through fault proxies of their
/// own (returned in the masters' order).
pub async fn env_with_proxies(cluster: &Cluster, from: usize) -> (HashMap<String, String>, Vec<proxy::Proxy>) {
    let mut proxies = Vec::new();
    for master in &cluster.masters[from..] {
        proxies.push(proxy::Proxy::start(([127, 0, 0, 1], master.port()).into()).await);
    }
    let urls: Vec<String> = cluster.masters[..from]
        .iter()
        .map(RedisProcess::url)
        .chain(proxies.iter().map(proxy::Proxy::url))
        .collect();
    let mut env = test_env(cluster);
    env.insert("REDLOCKD__REDIS__NODES".into(), urls.join(","));
    (env, proxies)
}

/// Cuts the links through `proxies` (to masters `from..`) and empties
/// those masters' script caches, so that a request held on a link meets
/// `NOSCRIPT` when it heals. Returns a plain client to each of them.
pub async fn cut_and_flush_scripts(cluster: &Cluster, proxies: &[proxy::Proxy], from: usize) -> Vec<Client> {
    let flush = fred::types::CustomCommand::new_static("SCRIPT", fred::types::ClusterHash::FirstKey, false);
    let mut admins = Vec::new();
    for (i, proxy) in (from..).zip(proxies) {
        proxy.set_mode(proxy::Mode::Blackhole);
        let admin = cluster.admin(i).await;
        let _: fred::prelude::Value = admin.custom(flush.clone(), vec!["FLUSH"]).await.unwrap();
        admins.push(admin);
    }
    admins
}

/// The daemon config `test_env` describes.
pub fn test_config(cluster: &Cluster) -> Config {
    Config::load(None, Some(test_env(cluster))).expect("test config")
}

impl Daemon {
    pub async fn start(cluster: &Cluster) -> Daemon {
        Daemon::start_with(test_env(cluster)).await
    }

    pub async fn start_with(env: HashMap<String, String>) -> Daemon {
        // RUST_LOG=redlockd=debug shows the daemon's log in a failing test.
        if let Ok(filter) = std::env::var("RUST_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_test_writer()
                .try_init();
        }
        let config = Config::load(None, Some(env)).expect("test config");
        let prepared = redlockd::app::prepare(config).expect("test config");
        let listeners = redlockd::app::Listeners {
            grpc: tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
            metrics: tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        };
        let addr = listeners.grpc.local_addr().unwrap();
        let metrics_addr = listeners.metrics.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let metrics = std::sync::Arc::new(redlockd::telemetry::metrics::Metrics::new());
        let task = tokio::spawn(async move {
            redlockd::app::run(prepared, listeners, metrics, async {
                let _ = stopped.await;
            })
            .await
            .expect("daemon failed");
        });
        Daemon {
            addr,
            metrics_addr,
            stop: Some(stop),
            task,
        }
    }

    pub async fn client(&self) -> LockClient<Channel> {
        LockClient::connect(format!("http://{}", self.addr))
            .await
            .expect("connecting to the daemon")
    }

    /// A plain-text channel to the daemon (health, reflection).
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    /// What gRPC health says of `service` ("" = the whole server).
    pub async fn health(&self, service: &str) -> ServingStatus {
        let request = HealthCheckRequest {
            service: service.into(),
        };
        let mut health = HealthClient::new(self.channel().await);
        health.check(request).await.unwrap().into_inner().status()
    }

    /// Polls until health says `want` for the server and the lock service
    /// (the monitor probes every 200 ms in tests).
    pub async fn until_health(&self, want: ServingStatus) {
        for _ in 0..100 {
            if self.health("").await == want && self.health(redlockd::api::health::SERVICE_NAME).await == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("health never became {want:?}");
    }

    /// The text of `GET /metrics`.
    pub async fn scrape(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(self.metrics_addr).await.unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        response
    }

    /// Scrapes until the text holds every one of `series` (the monitor
    /// probes the masters concurrently, and one may answer late on a loaded
    /// machine); panics with the last scrape after 10 s.
    pub async fn scrape_until(&self, series: &[&str]) -> String {
        let mut scraped = String::new();
        for _ in 0..100 {
            scraped = self.scrape().await;
            if series.iter().all(|s| scraped.contains(s)) {
                return scraped;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let missing: Vec<_> = series.iter().filter(|s| !scraped.contains(*s)).collect();
        panic!("never scraped {missing:?}; the last scrape:\n{scraped}");
    }

    /// Waits until `n` requests wait in this daemon's queues (the
    /// `redlock_waiters` gauge): a test orders its waiters by this, not by
    /// sleeping, which a loaded machine can outlast.
    pub async fn until_waiters(&self, n: usize) {
        self.scrape_until(&[&format!("\nredlock_waiters {n}\n")]).await;
    }

    /// Waits until this daemon's probes found masters `0..n` usable (a
    /// daemon serves once a quorum is, so some may still be unverified).
    pub async fn until_usable(&self, n: usize) {
        let series: Vec<String> = (0..n)
            .map(|node| format!("redlock_node_state{{node=\"{node}\",state=\"usable\"}} 1\n"))
            .collect();
        self.scrape_until(&series.iter().map(String::as_str).collect::<Vec<_>>())
            .await;
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

pub fn secs(s: f64) -> Option<prost_types::Duration> {
    Some(Duration::from_secs_f64(s).try_into().unwrap())
}

pub fn acquire_req(resource: &str, ttl: f64, wait: f64) -> AcquireRequest {
    AcquireRequest {
        resource: resource.into(),
        ttl: secs(ttl),
        wait: if wait > 0.0 { secs(wait) } else { None },
        owner: "test".into(),
        ..Default::default()
    }
}

/// Acquires and expects a grant.
pub async fn must_acquire(client: &mut LockClient<Channel>, resource: &str, ttl: f64, wait: f64) -> Lease {
    let reply = try_acquire(client, resource, ttl, wait).await;
    assert!(reply.acquired, "expected {resource} to be granted: {reply:?}");
    reply.lease.expect("a grant carries a lease")
}

/// Sends `request` and expects a grant.
pub async fn must_acquire_with(client: &mut LockClient<Channel>, request: AcquireRequest) -> Lease {
    let reply = client.acquire(request).await.expect("acquire failed").into_inner();
    assert!(reply.acquired, "expected a grant: {reply:?}");
    reply.lease.expect("a grant carries a lease")
}

pub async fn try_acquire(client: &mut LockClient<Channel>, resource: &str, ttl: f64, wait: f64) -> AcquireResponse {
    client
        .acquire(acquire_req(resource, ttl, wait))
        .await
        .expect("acquire failed")
        .into_inner()
}

pub async fn release(client: &mut LockClient<Channel>, lease: &Lease) -> bool {
    let req = ReleaseRequest {
        resource: lease.resource.clone(),
        value: lease.value.clone(),
    };
    client.release(req).await.expect("release failed").into_inner().released
}
