//! etcd's side of (e) and (f) (docs/performance.md#elections), on the
//! etcd of `etcd.rs`: a candidate is a lease of the election's TTL kept
//! alive every TTL/3 (as etcd's clientv3 does) on a connection of its own,
//! and a `v3electionpb.Election/Campaign` call under it; an observer is an
//! `Election/Observe` stream. etcd has no stream to break: a killed
//! candidate's leadership ends when its lease runs out. The messages are
//! written out below, as in `etcd.rs` (etcd 3.4's
//! `v3electionpb/v3election.proto`, `etcdserverpb/rpc.proto`,
//! `mvccpb/kv.proto`; response headers are skipped as unknown fields).

use std::time::Duration;

use anyhow::{Context, bail};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::http::uri::PathAndQuery;

use crate::candidate::{Ballot, Candidate, Socket};
use crate::elections_types::{Electorate, Values};
use crate::etcd::{self, Empty};

/// One election on a running etcd.
pub struct EtcdElection {
    pub endpoint: String,
    pub election: String,
    /// Each candidate's lease TTL, in seconds.
    pub lease_ttl: i64,
}

impl Electorate for EtcdElection {
    fn candidate(&self, id: usize) -> Candidate {
        let (endpoint, election, ttl) = (self.endpoint.clone(), self.election.clone(), self.lease_ttl);
        Candidate::spawn(id, move |socket, mut ballot| async move {
            if let Err(e) = campaign(&endpoint, &election, ttl, &socket, &mut ballot).await {
                ballot.failed(e);
            }
        })
    }

    async fn observers(&self, n: usize, connections: usize) -> anyhow::Result<Vec<Values>> {
        let mut channels = Vec::new();
        for _ in 0..connections.clamp(1, n.max(1)) {
            let channel = tonic::transport::Endpoint::from_shared(self.endpoint.clone())?
                .tcp_nodelay(true)
                .connect()
                .await
                .context("connecting to etcd")?;
            channels.push(channel);
        }
        let opened = (0..n).map(|i| {
            let channel = channels[i % channels.len()].clone();
            let name = self.election.clone().into_bytes();
            async move {
                let mut grpc = tonic::client::Grpc::new(channel);
                grpc.ready().await?;
                let codec = tonic_prost::ProstCodec::<LeaderRequest, LeaderResponse>::default();
                let path = PathAndQuery::from_static("/v3electionpb.Election/Observe");
                anyhow::Ok(
                    grpc.server_streaming(tonic::Request::new(LeaderRequest { name }), path, codec)
                        .await?
                        .into_inner(),
                )
            }
        });
        let mut observers = Vec::with_capacity(n);
        let mut opening = futures::stream::iter(opened).buffer_unordered(64);
        while let Some(stream) = opening.next().await {
            let values = stream.context("Election/Observe")?.map(|told| {
                let told = told?;
                Ok(told.kv.map(|kv| kv.value).unwrap_or_default())
            });
            observers.push(values.boxed());
        }
        Ok(observers)
    }
}

/// Campaigns under a lease kept alive until killed: says when elected,
/// then proclaims what it is given.
async fn campaign(
    endpoint: &str,
    election: &str,
    ttl: i64,
    socket: &Socket,
    ballot: &mut Ballot,
) -> anyhow::Result<()> {
    let channel = socket.channel(endpoint).await.context("connecting to etcd")?;
    let lease = etcd::grant_for(&channel, ttl).await?;
    // A keep-alive queued first: etcd answers the stream's headers with its first reply.
    let (keep, keeps) = mpsc::channel(4);
    keep.send(LeaseKeepAliveRequest { id: lease }).await?;
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await?;
    let codec = tonic_prost::ProstCodec::<LeaseKeepAliveRequest, LeaseKeepAliveResponse>::default();
    let path = PathAndQuery::from_static("/etcdserverpb.Lease/LeaseKeepAlive");
    let mut kept = (grpc
        .streaming(tonic::Request::new(ReceiverStream::new(keeps)), path, codec)
        .await)
        .context("Lease/LeaseKeepAlive")?
        .into_inner();
    let period = Duration::from_secs(u64::try_from(ttl).unwrap_or(1)) / 3;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let request = tonic::Request::new(CampaignRequest {
        name: election.as_bytes().to_vec(),
        lease,
        value: ballot.name.clone().into_bytes(),
    });
    let campaigning = etcd::unary::<_, CampaignResponse>(&channel, "/v3electionpb.Election/Campaign", request);
    tokio::pin!(campaigning);
    let mut leader: Option<LeaderKey> = None;
    loop {
        tokio::select! {
            reply = &mut campaigning, if leader.is_none() => {
                let key = reply.context("Election/Campaign")?.leader.context("no leader key")?;
                ballot.elected(u64::try_from(key.rev).unwrap_or(0));
                leader = Some(key);
            }
            _ = tick.tick() => keep.send(LeaseKeepAliveRequest { id: lease }).await?,
            reply = kept.message() => match reply.context("Lease/LeaseKeepAlive")? {
                Some(reply) if reply.ttl <= 0 => bail!("lease {lease} expired"),
                Some(_) => {}
                None => bail!("the keep-alive stream ended"),
            },
            value = ballot.proclaims.recv(), if leader.is_some() => {
                let Some(value) = value else { return Ok(()) };
                let request = tonic::Request::new(ProclaimRequest { leader: leader.clone(), value });
                etcd::unary::<_, Empty>(&channel, "/v3electionpb.Election/Proclaim", request)
                    .await
                    .context("Election/Proclaim")?;
            }
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaseKeepAliveRequest {
    #[prost(int64, tag = "1")]
    id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaseKeepAliveResponse {
    #[prost(int64, tag = "3")]
    ttl: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct CampaignRequest {
    #[prost(bytes = "vec", tag = "1")]
    name: Vec<u8>,
    #[prost(int64, tag = "2")]
    lease: i64,
    #[prost(bytes = "vec", tag = "3")]
    value: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct CampaignResponse {
    #[prost(message, optional, tag = "2")]
    leader: Option<LeaderKey>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaderKey {
    #[prost(bytes = "vec", tag = "1")]
    name: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    key: Vec<u8>,
    #[prost(int64, tag = "3")]
    rev: i64,
    #[prost(int64, tag = "4")]
    lease: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ProclaimRequest {
    #[prost(message, optional, tag = "1")]
    leader: Option<LeaderKey>,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaderRequest {
    #[prost(bytes = "vec", tag = "1")]
    name: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeaderResponse {
    #[prost(message, optional, tag = "2")]
    kv: Option<KeyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct KeyValue {
    #[prost(bytes = "vec", tag = "5")]
    value: Vec<u8>,
}
