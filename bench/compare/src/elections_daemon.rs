//! redlockd's side of (e) and (f) (docs/performance.md#elections): a
//! candidate is a `redlockd.v1.Election/Campaign` stream on a connection of
//! its own, lock_delay 0; an observer is an `Election/Observe` stream.

use std::time::Duration;

use anyhow::{Context, bail};
use futures::StreamExt;
use redlockd_client::proto::campaign_request::Request as Ask;
use redlockd_client::proto::election_client::ElectionClient;
use redlockd_client::proto::{CampaignEvent, CampaignProclaim, CampaignRequest, CampaignStart, ObserveRequest};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Endpoint;

use crate::candidate::{Ballot, Candidate, Socket};
use crate::elections_types::{Electorate, Values};

/// One election on a running daemon.
pub struct DaemonElection {
    pub addr: String,
    pub election: String,
    pub ttl: Duration,
}

impl Electorate for DaemonElection {
    fn candidate(&self, id: usize) -> Candidate {
        let (addr, election, ttl) = (self.addr.clone(), self.election.clone(), self.ttl);
        Candidate::spawn(id, move |socket, mut ballot| async move {
            if let Err(e) = campaign(&addr, &election, ttl, &socket, &mut ballot).await {
                ballot.failed(e);
            }
        })
    }

    async fn observers(&self, n: usize, connections: usize) -> anyhow::Result<Vec<Values>> {
        let mut clients = Vec::new();
        for _ in 0..connections.clamp(1, n.max(1)) {
            let channel = Endpoint::from_shared(self.addr.clone())?
                .tcp_nodelay(true)
                .connect()
                .await
                .context("connecting to redlockd")?;
            clients.push(ElectionClient::new(channel));
        }
        let opened = (0..n).map(|i| {
            let mut client = clients[i % clients.len()].clone();
            let election = self.election.clone();
            async move { client.observe(ObserveRequest { election }).await }
        });
        let mut observers = Vec::with_capacity(n);
        // Opened 64 at a time, as many clients starting at once would.
        let mut opening = futures::stream::iter(opened).buffer_unordered(64);
        while let Some(stream) = opening.next().await {
            let stream = stream.context("Election/Observe")?.into_inner();
            let values = stream.map(|told| {
                let told = told?;
                Ok(if told.elected { told.value } else { Vec::new() })
            });
            observers.push(values.boxed());
        }
        Ok(observers)
    }
}

/// Campaigns until killed: says when elected, then proclaims what it is given.
async fn campaign(
    addr: &str,
    election: &str,
    ttl: Duration,
    socket: &Socket,
    ballot: &mut Ballot,
) -> anyhow::Result<()> {
    let channel = socket.channel(addr).await.context("connecting to redlockd")?;
    let (requests, outgoing) = mpsc::channel(16);
    let start = CampaignStart {
        election: election.to_owned(),
        candidate: ballot.name.clone(),
        value: ballot.name.clone().into_bytes(),
        ttl: Some(prost_types::Duration {
            seconds: i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX),
            nanos: i32::try_from(ttl.subsec_nanos()).unwrap_or(0),
        }),
        ..CampaignStart::default()
    };
    requests
        .send(CampaignRequest {
            request: Some(Ask::Start(start)),
        })
        .await?;
    let mut events = ElectionClient::new(channel)
        .campaign(ReceiverStream::new(outgoing))
        .await
        .context("Election/Campaign")?
        .into_inner();
    match events.message().await? {
        Some(told) if told.event() == CampaignEvent::Elected => ballot.elected(told.term),
        Some(told) => bail!("{:?} before ELECTED: {}", told.event(), told.reason),
        None => bail!("the stream ended before ELECTED"),
    }
    loop {
        tokio::select! {
            value = ballot.proclaims.recv() => {
                let Some(value) = value else { return Ok(()) };
                let proclaim = Ask::Proclaim(CampaignProclaim { value });
                requests.send(CampaignRequest { request: Some(proclaim) }).await?;
            }
            told = events.message() => match told? {
                Some(told) if matches!(told.event(), CampaignEvent::Lost | CampaignEvent::Resigned) => {
                    bail!("{:?}: {}", told.event(), told.reason)
                }
                Some(_) => {}
                None => bail!("the stream ended"),
            },
        }
    }
}
