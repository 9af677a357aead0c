//! etcd's lock API (`v3lockpb.Lock`), single node, one lease per client
//! session: Debian's `etcd-server` started here on free loopback ports in a
//! temporary data directory, and a minimal client of the four calls the
//! workloads make (the messages are written out below instead of compiling
//! etcd's protos: a fraction of the build, and the same wire format).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};

use crate::drive::Locker;

/// The lease every client session takes once: longer than any run, so no
/// keep-alives are needed while measuring.
const LEASE_TTL_SECONDS: i64 = 600;
/// How long a contended Lock call waits before the client asks again.
const WAIT: Duration = Duration::from_secs(10);

/// `etcd` on PATH or in Debian's place.
pub fn find() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("etcd")).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/bin/etcd")])
        .find(|p| p.is_file())
}

/// A running single-node etcd; killed (and its data removed) on drop.
pub struct Etcd {
    child: Option<Child>,
    pub endpoint: String,
    dir: tempfile::TempDir,
}

impl Etcd {
    pub async fn start(binary: &std::path::Path) -> anyhow::Result<Etcd> {
        let dir = tempfile::Builder::new().prefix("redlockd-bench-etcd-").tempdir()?;
        let client = format!("http://127.0.0.1:{}", redlockd::dev::free_port()?);
        let peer = format!("http://127.0.0.1:{}", redlockd::dev::free_port()?);
        let log = std::fs::File::create(dir.path().join("etcd.log"))?;
        let child = Command::new(binary)
            .arg("--name=bench")
            .arg(format!("--data-dir={}", dir.path().join("data").display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=bench={peer}"))
            .args(["--logger=zap", "--log-level=warn"])
            // Debian's unit file sets ETCD_* variables; never take them from the caller.
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut etcd = Etcd {
            child: Some(child),
            endpoint: client,
            dir,
        };
        let started = Instant::now();
        loop {
            if let Some(status) = etcd.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                bail!("etcd exited with {status}:\n{}", etcd.log());
            }
            let ready = async {
                let channel = etcd.channel().await?;
                let lease = grant(&channel).await?;
                revoke(&channel, lease).await
            };
            match ready.await {
                Ok(()) => return Ok(etcd),
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    bail!("etcd did not serve within 30 s ({e:#}):\n{}", etcd.log())
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
    }

    pub async fn channel(&self) -> anyhow::Result<Channel> {
        Ok(Endpoint::from_shared(self.endpoint.clone())?
            .tcp_nodelay(true)
            .connect()
            .await?)
    }

    /// Clients on `channel`, each with its own lease (its session).
    pub async fn clients(&self, channel: &Channel, n: usize) -> anyhow::Result<Vec<EtcdLocker>> {
        let mut clients = Vec::with_capacity(n);
        for _ in 0..n {
            clients.push(EtcdLocker {
                channel: channel.clone(),
                lease: grant(channel).await?,
            });
        }
        Ok(clients)
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            crate::daemon::terminate(child, Duration::from_secs(10));
        }
    }
}

/// One etcd client session: a lease, and locks taken under it.
#[derive(Clone)]
pub struct EtcdLocker {
    channel: Channel,
    lease: i64,
}

impl EtcdLocker {
    /// Revokes the session's lease (its lock keys go with it).
    pub async fn close(self) -> anyhow::Result<()> {
        revoke(&self.channel, self.lease).await
    }

    async fn lock(&self, name: String, deadline: Option<Duration>) -> anyhow::Result<Option<Vec<u8>>> {
        let mut request = tonic::Request::new(LockRequest {
            name: name.into_bytes(),
            lease: self.lease,
        });
        if let Some(deadline) = deadline {
            request.set_timeout(deadline);
        }
        match unary::<_, LockResponse>(&self.channel, "/v3lockpb.Lock/Lock", request).await {
            Ok(reply) => Ok(Some(reply.key)),
            Err(status) if status.code() == tonic::Code::DeadlineExceeded => Ok(None),
            Err(status) => Err(status.into()),
        }
    }
}

impl Locker for EtcdLocker {
    type Held = Vec<u8>;

    /// etcd has no single-attempt lock: `Lock` waits until held. On distinct
    /// names it returns at once.
    async fn once(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        self.lock(name, None).await
    }

    async fn waiting(&self, name: String) -> anyhow::Result<Option<Self::Held>> {
        self.lock(name, Some(WAIT)).await
    }

    async fn release(&self, key: Self::Held) -> anyhow::Result<()> {
        unary::<_, UnlockResponse>(
            &self.channel,
            "/v3lockpb.Lock/Unlock",
            tonic::Request::new(UnlockRequest { key }),
        )
        .await?;
        Ok(())
    }
}

async fn grant(channel: &Channel) -> anyhow::Result<i64> {
    grant_for(channel, LEASE_TTL_SECONDS).await
}

/// A new lease of `ttl` seconds.
pub(crate) async fn grant_for(channel: &Channel, ttl: i64) -> anyhow::Result<i64> {
    let request = tonic::Request::new(LeaseGrantRequest { ttl, id: 0 });
    let reply: LeaseGrantResponse = unary(channel, "/etcdserverpb.Lease/LeaseGrant", request).await?;
    if reply.error.is_empty() {
        Ok(reply.id)
    } else {
        Err(anyhow!("LeaseGrant: {}", reply.error))
    }
}

async fn revoke(channel: &Channel, id: i64) -> anyhow::Result<()> {
    let request = tonic::Request::new(LeaseRevokeRequest { id });
    unary::<_, Empty>(channel, "/etcdserverpb.Lease/LeaseRevoke", request).await?;
    Ok(())
}

pub(crate) async fn unary<Req, Resp>(
    channel: &Channel,
    path: &'static str,
    request: tonic::Request<Req>,
) -> Result<Resp, tonic::Status>
where
    Req: prost::Message + Send + Sync + 'static,
    Resp: prost::Message + Default + Send + Sync + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let codec = tonic_prost::ProstCodec::<Req, Resp>::default();
    Ok(grpc
        .unary(request, PathAndQuery::from_static(path), codec)
        .await?
        .into_inner())
}

// etcd 3.4's messages, the fields the workloads use (etcdserverpb/rpc.proto,
// v3lockpb/v3lock.proto); response headers are skipped as unknown fields.

#[derive(Clone, PartialEq, prost::Message)]
struct LeaseGrantRequest {
    #[prost(int64, tag = "1")]
    ttl: i64,
    #[prost(int64, tag = "2")]
    id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaseGrantResponse {
    #[prost(int64, tag = "2")]
    id: i64,
    #[prost(int64, tag = "3")]
    ttl: i64,
    #[prost(string, tag = "4")]
    error: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaseRevokeRequest {
    #[prost(int64, tag = "1")]
    id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LockRequest {
    #[prost(bytes = "vec", tag = "1")]
    name: Vec<u8>,
    #[prost(int64, tag = "2")]
    lease: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LockResponse {
    #[prost(bytes = "vec", tag = "2")]
    key: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct UnlockRequest {
    #[prost(bytes = "vec", tag = "1")]
    key: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct UnlockResponse {}

/// Any reply whose fields are not needed.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Empty {}
