//! A Rust client of the `Pipeline` stream: one stream shared by any number
//! of tasks, each call awaited on its own as if it were a unary call. A call
//! whose caller stops waiting still runs in the daemon; if it grants a lock
//! after all, the client releases it at once, as the daemon does when a
//! unary caller leaves.
//!
//! ```no_run
//! # async fn example(channel: tonic::transport::Channel) -> Result<(), tonic::Status> {
//! use redlockd_client::Pipeline;
//! use redlockd_client::proto::{AcquireRequest, ReleaseRequest};
//!
//! let pipeline = Pipeline::open(redlockd_client::proto::lock_client::LockClient::new(channel)).await?;
//! let reply = pipeline
//!     .acquire(AcquireRequest { resource: "jobs/nightly".into(), ..Default::default() })
//!     .await?;
//! if let Some(lease) = reply.lease {
//!     // ... work, sending lease.fencing_token to the storage ...
//!     pipeline.release(ReleaseRequest { resource: lease.resource, value: lease.value }).await?;
//! }
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{mpsc, oneshot};
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::proto::lock_client::LockClient;
use crate::proto::pipeline_request::Call;
use crate::proto::pipeline_response::Result as Answer;
use crate::proto::{
    AcquireManyRequest, AcquireManyResponse, AcquireRequest, AcquireResponse, ExtendRequest, ExtendResponse,
    PipelineRequest, ReleaseRequest, ReleaseResponse,
};

/// Calls sent but not yet taken by the stream; the daemon bounds the calls
/// in flight itself.
const QUEUED: usize = 1024;

/// One `Pipeline` stream. Cheap to clone; every clone shares the stream.
#[derive(Clone)]
pub struct Pipeline {
    calls: mpsc::Sender<PipelineRequest>,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    next_id: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The calls waiting for their reply, by id.
    waiting: HashMap<u64, oneshot::Sender<Result<Answer, Status>>>,
    /// Why the stream ended, once it has.
    ended: Option<Status>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A call waiting for its reply. Dropped before the reply was taken (its
/// caller stopped waiting), it forgets the call, and releases a lock that
/// was granted to it meanwhile.
struct Waiting<'a> {
    pipeline: &'a Pipeline,
    id: u64,
    answered: oneshot::Receiver<Result<Answer, Status>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.pipeline.shared.state().waiting.remove(&self.id);
        if let Ok(Ok(answer)) = self.answered.try_recv() {
            release_orphan(&self.pipeline.calls, &self.pipeline.shared, answer);
        }
    }
}

/// Releases the lock `answer` granted, if it did, to a caller that is gone:
/// nobody else knows its value, so it is given back now rather than a TTL
/// later, as the daemon does for a unary call.
fn release_orphan(calls: &mpsc::Sender<PipelineRequest>, shared: &Shared, answer: Answer) {
    let Answer::Acquire(AcquireResponse { lease: Some(lease), .. }) = answer else {
        return;
    };
    let request = PipelineRequest {
        id: shared.next_id.fetch_add(1, Ordering::Relaxed),
        call: Some(Call::Release(ReleaseRequest {
            resource: lease.resource,
            value: lease.value,
        })),
    };
    let calls = calls.clone();
    tokio::spawn(async move { calls.send(request).await });
}

impl Pipeline {
    /// Opens a stream on `client`'s connection.
    ///
    /// # Errors
    /// The daemon's status when it refuses the stream (for example
    /// UNAUTHENTICATED).
    pub async fn open(client: LockClient<Channel>) -> Result<Pipeline, Status> {
        Pipeline::open_with(client, MetadataMap::new()).await
    }

    /// Opens a stream with `metadata` (for example `authorization: Bearer
    /// <token>`).
    ///
    /// # Errors
    /// As for [`Pipeline::open`].
    pub async fn open_with(mut client: LockClient<Channel>, metadata: MetadataMap) -> Result<Pipeline, Status> {
        let (calls, queued) = mpsc::channel(QUEUED);
        let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(queued));
        *request.metadata_mut() = metadata;
        let mut replies = client.pipeline(request).await?.into_inner();
        let shared = Arc::new(Shared::default());
        let reading = shared.clone();
        // Weak: the stream half-closes when the last `Pipeline` goes.
        let orphans = calls.downgrade();
        tokio::spawn(async move {
            let ended = loop {
                match replies.message().await {
                    Ok(Some(reply)) => {
                        let Some(answer) = reply.result else { continue };
                        let waiter = reading.state().waiting.remove(&reply.id);
                        // A caller that stopped waiting (a timeout, a
                        // cancelled task) leaves its answer here.
                        let orphan = match waiter {
                            Some(waiter) => waiter.send(Ok(answer)).err().and_then(Result::ok),
                            None => Some(answer),
                        };
                        if let (Some(answer), Some(calls)) = (orphan, orphans.upgrade()) {
                            release_orphan(&calls, &reading, answer);
                        }
                    }
                    Ok(None) => break Status::unavailable("the Pipeline stream ended"),
                    Err(status) => break status,
                }
            };
            let mut state = reading.state();
            for (_, waiter) in state.waiting.drain() {
                let _ = waiter.send(Err(ended.clone()));
            }
            state.ended = Some(ended);
        });
        Ok(Pipeline { calls, shared })
    }

    async fn call(&self, call: Call) -> Result<Answer, Status> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        {
            let mut state = self.shared.state();
            if let Some(ended) = &state.ended {
                return Err(ended.clone());
            }
            state.waiting.insert(id, answer);
        }
        let mut waiting = Waiting {
            pipeline: self,
            id,
            answered,
        };
        let request = PipelineRequest { id, call: Some(call) };
        // The stream may end (and answer) while the call waits for room.
        tokio::select! {
            sent = self.calls.send(request) => if sent.is_err() {
                return Err(Status::unavailable("the Pipeline stream ended"));
            },
            answer = &mut waiting.answered => return finish(answer),
        }
        finish((&mut waiting.answered).await)
    }

    /// `Acquire` on the stream.
    ///
    /// # Errors
    /// What the unary call would return, or UNAVAILABLE when the stream
    /// ended (its own status when it ended with one).
    pub async fn acquire(&self, request: AcquireRequest) -> Result<AcquireResponse, Status> {
        match self.call(Call::Acquire(request)).await? {
            Answer::Acquire(reply) => Ok(reply),
            other => Err(mismatched("Acquire", &other)),
        }
    }

    /// `Extend` on the stream.
    ///
    /// # Errors
    /// As for [`Pipeline::acquire`].
    pub async fn extend(&self, request: ExtendRequest) -> Result<ExtendResponse, Status> {
        match self.call(Call::Extend(request)).await? {
            Answer::Extend(reply) => Ok(reply),
            other => Err(mismatched("Extend", &other)),
        }
    }

    /// `Release` on the stream.
    ///
    /// # Errors
    /// As for [`Pipeline::acquire`].
    pub async fn release(&self, request: ReleaseRequest) -> Result<ReleaseResponse, Status> {
        match self.call(Call::Release(request)).await? {
            Answer::Release(reply) => Ok(reply),
            other => Err(mismatched("Release", &other)),
        }
    }

    /// `AcquireMany` on the stream (`ExtendMany` and `ReleaseMany` go
    /// member by member with `extend` and `release`, or unary).
    ///
    /// # Errors
    /// As for [`Pipeline::acquire`].
    pub async fn acquire_many(&self, request: AcquireManyRequest) -> Result<AcquireManyResponse, Status> {
        match self.call(Call::AcquireMany(request)).await? {
            Answer::AcquireMany(reply) => Ok(reply),
            other => Err(mismatched("AcquireMany", &other)),
        }
    }
}

fn finish(answer: Result<Result<Answer, Status>, oneshot::error::RecvError>) -> Result<Answer, Status> {
    match answer {
        Ok(Ok(Answer::Error(error))) => Err(Status::new(Code::from(error.code), error.message)),
        Ok(answer) => answer,
        Err(_) => Err(Status::unavailable("the Pipeline stream ended")),
    }
}

fn mismatched(asked: &str, answer: &Answer) -> Status {
    Status::internal(format!("the daemon answered a {asked} call with {answer:?}"))
}
