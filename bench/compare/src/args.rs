//! The benchmark's command line (`scripts/bench --help`): what to run, how
//! long, and the systems and workloads it names.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// redlockd side by side with rslock, node-redlock, go-redsync, Redisson, etcd and ZooKeeper (docs/performance.md).
#[derive(Parser)]
#[command(name = "compare", bin_name = "scripts/bench")]
pub struct Args {
    /// Seconds measured per workload and system.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Measured runs of each workload and system, the systems taking turns
    /// (redlockd, rslock, …, redlockd, rslock, …): the tables show each
    /// system's run with the median rate, and a table of every round's
    /// rates and ratios follows. Repeats even out the machine's drift from
    /// one run to the next, which can move one system's rate by 15–40%.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Seconds of warm-up before each measured window.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Which systems to run (comma-separated). redlockd-aof, rslock-aof,
    /// redlockd-valkey and rslock-valkey run on masters of their own (Redis
    /// 7 with the AOF as deployed, Valkey 9), started only when named.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "redlockd,redlockd-http1,redlockd-http2,redlockd-traced,rslock,node,go,redisson,redisson-redlock,etcd,zookeeper"
    )]
    pub systems: Vec<System>,
    /// Which workloads to run (comma-separated). (e) and (f), the
    /// elections (redlockd, etcd and ZooKeeper only, one run each whatever
    /// `--rounds`), run only when named: etcd's and ZooKeeper's failovers
    /// wait out a lease TTL or session timeout each, about 8 minutes each
    /// for 50 at 10 s.
    #[arg(long, value_delimiter = ',', default_value = "a,b,c,d")]
    pub workloads: Vec<Workload>,
    /// Concurrent clients in (b) and (c).
    #[arg(long, default_value_t = 64)]
    pub clients: usize,
    /// HTTP/2 connections the gRPC clients of (a)-(c) share (redlockd and
    /// etcd); 1 = one application process with `--clients` tasks.
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Hold sessions in (d).
    #[arg(long, default_value_t = 10_000)]
    pub sessions: usize,
    /// HTTP/2 connections the sessions of (d) are spread over.
    #[arg(long, default_value_t = 128)]
    pub session_connections: usize,
    /// TTL of the sessions of (d); the daemon renews each at about a third of it.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    pub hold_ttl: Duration,
    /// Failovers measured in (e).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub failovers: u32,
    /// Candidates campaigning at once in (e) and (f), each on a connection of its own.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub candidates: u32,
    /// The TTL of a term in (e) and (f), of each etcd candidate's lease
    /// (rounded up to whole seconds; etcd's shortest is about 2 s) and each
    /// ZooKeeper client's session timeout (it grants 4 to 40 s). The
    /// default is the daemon's lock.default_ttl.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub election_ttl: Duration,
    /// Observe streams on one election in (f).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub observers: u32,
    /// HTTP/2 connections the observers of (f) are spread over (the
    /// daemon's server.max_concurrent_streams, 1000 by default, bounds the
    /// streams on one).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub observer_connections: u32,
    /// New values the leader proclaims in (f), one after another.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub proclaims: u32,
    /// How the redlockd clients of (a)-(c) call: `pipeline` (one `Pipeline`
    /// stream per connection, shared by its clients) or `unary`.
    #[arg(long, default_value = "pipeline")]
    pub api: Api,
    /// redlockd's positions: 0 = the five standalone masters every system
    /// uses; N = five Redis Clusters of N primaries each (rslock and
    /// node-redlock keep the standalone masters; redlockd's Redis CPU is
    /// then every primary's).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=8))]
    pub cluster_primaries: u16,
    /// The redlockd binary [default: target/release/redlockd].
    #[arg(long)]
    pub daemon: Option<PathBuf>,
    /// Before each run, wait up to this many seconds for the machine's other
    /// processes to go (nearly) idle; 0 = do not wait.
    #[arg(long, default_value_t = 0.0)]
    pub quiet: f64,
    /// Also write the report here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Instead of the comparison: redlockd alone under `--conditions`
    /// (scripts/bench-throttled, docs/performance.md#a-throttled-daemon),
    /// (a) and (b) each `--duration` seconds with `--clients` in (b).
    #[arg(long)]
    pub throttled: bool,
    /// With `--throttled`: the daemon's CPU limits in cores (a cgroup's CFS
    /// quota over 100 ms), and `hog` (no limit, a busy loop on every core).
    #[arg(long, value_delimiter = ',', default_value = "1,0.5,0.2,0.1,hog")]
    pub conditions: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum Api {
    Pipeline,
    Unary,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, ValueEnum)]
pub enum System {
    Redlockd,
    /// redlockd's HTTP/JSON routes over HTTP/1.1 keep-alive ((a) and (b)).
    RedlockdHttp1,
    /// redlockd's HTTP/JSON routes over HTTP/2 ((a) and (b)).
    RedlockdHttp2,
    /// redlockd over gRPC with traces exported to a receiver here ((a) and (b)).
    RedlockdTraced,
    Rslock,
    Node,
    Go,
    Redisson,
    RedissonRedlock,
    Etcd,
    /// ZooKeeper with Curator's InterProcessMutex (bench/java, zookeeper.rs).
    Zookeeper,
    /// redlockd on five Redis 7 masters with the AOF, as deployed (masters.rs).
    RedlockdAof,
    /// rslock on those masters.
    RslockAof,
    /// redlockd on five Valkey 9 masters (masters.rs).
    RedlockdValkey,
    /// rslock on those masters.
    RslockValkey,
}

impl System {
    pub fn label(self) -> &'static str {
        match self {
            System::Redlockd => "redlockd (gRPC)",
            System::RedlockdHttp1 => "redlockd (HTTP/1.1 JSON)",
            System::RedlockdHttp2 => "redlockd (HTTP/2 JSON)",
            System::RedlockdTraced => "redlockd (gRPC, traced)",
            System::Rslock => "rslock (in-process)",
            System::Node => "node-redlock",
            System::Go => "go-redsync",
            System::Redisson => "Redisson RLock (1 master)",
            System::RedissonRedlock => "Redisson RedLock",
            System::Etcd => "etcd lock API",
            System::Zookeeper => "ZooKeeper (Curator)",
            System::RedlockdAof => "redlockd (AOF masters)",
            System::RslockAof => "rslock (AOF masters)",
            System::RedlockdValkey => "redlockd (Valkey 9)",
            System::RslockValkey => "rslock (Valkey 9)",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            System::Redlockd => "redlockd",
            System::RedlockdHttp1 => "redlockd-http1",
            System::RedlockdHttp2 => "redlockd-http2",
            System::RedlockdTraced => "redlockd-traced",
            System::Rslock => "rslock",
            System::Node => "node",
            System::Go => "go",
            System::Redisson => "redisson",
            System::RedissonRedlock => "redisson-redlock",
            System::Etcd => "etcd",
            System::Zookeeper => "zookeeper",
            System::RedlockdAof => "redlockd-aof",
            System::RslockAof => "rslock-aof",
            System::RedlockdValkey => "redlockd-valkey",
            System::RslockValkey => "rslock-valkey",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, ValueEnum)]
pub enum Workload {
    /// One client, acquire + release on distinct names.
    A,
    /// `--clients` clients on distinct names.
    B,
    /// `--clients` clients on one name, each waiting until it holds it.
    C,
    /// `--sessions` open Hold sessions (redlockd only).
    D,
    /// Leader failover: the leader's connection dropped → the next candidate elected, `--failovers` times.
    E,
    /// Observe fan-out: a proclaimed value → every one of `--observers` observers told, `--proclaims` times.
    F,
}

impl Workload {
    pub fn key(self) -> &'static str {
        match self {
            Workload::A => "a",
            Workload::B => "b",
            Workload::C => "c",
            Workload::D => "d",
            Workload::E => "e",
            Workload::F => "f",
        }
    }

    /// (a)-(c): the closed loops every system runs.
    pub fn is_lock_loop(self) -> bool {
        matches!(self, Workload::A | Workload::B | Workload::C)
    }

    /// (e) and (f): redlockd's and etcd's elections.
    pub fn is_election(self) -> bool {
        matches!(self, Workload::E | Workload::F)
    }
}
