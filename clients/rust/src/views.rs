//! Views, not locks (docs/design.md#observe-and-watch): who leads an
//! election, and the streams that follow an election (`observe`) or a lock
//! (`watch`). By the time a message arrives the state may have changed;
//! only a term or a fencing token, checked by the resource, makes a write
//! safe.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::SystemTime;

use tokio_stream::Stream;
use tonic::Streaming;

use crate::error::Error;
use crate::proto::{LeaderResponse, WatchResponse};

/// The leader of an election, as a majority of the masters agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// The leading candidate's name.
    pub candidate: String,
    /// Its published value.
    pub value: Vec<u8>,
    /// Its term, exactly as its campaign was told when elected.
    pub term: u64,
    /// When the term began, on the masters' clocks.
    pub since: Option<SystemTime>,
}

impl Leader {
    /// The leader a reply names (`None`: nobody leads).
    pub(crate) fn from_wire(reply: LeaderResponse) -> Option<Leader> {
        reply.elected.then(|| Leader {
            candidate: reply.candidate,
            value: reply.value,
            term: reply.term,
            since: reply.since.and_then(|since| SystemTime::try_from(since).ok()),
        })
    }
}

/// `Client::observe`: an election's state now, then every change, as a
/// [`Stream`] (`futures::StreamExt` or `tokio_stream::StreamExt` read it);
/// `None` when nobody leads.
pub struct LeaderStream {
    replies: Streaming<LeaderResponse>,
}

impl LeaderStream {
    pub(crate) fn new(replies: Streaming<LeaderResponse>) -> LeaderStream {
        LeaderStream { replies }
    }
}

impl Stream for LeaderStream {
    type Item = Result<Option<Leader>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.replies)
            .poll_next(cx)
            .map(|next| next.map(|reply| reply.map(Leader::from_wire).map_err(Error::from)))
    }
}

/// `Client::watch`: who holds a lock now (`WATCH_EVENT_CURRENT`), then each
/// change named (ACQUIRED, RELEASED, EXPIRED, FORCE_RELEASED, CHANGED), as
/// a [`Stream`] of the daemon's `WatchResponse`s.
pub struct WatchStream {
    replies: Streaming<WatchResponse>,
}

impl WatchStream {
    pub(crate) fn new(replies: Streaming<WatchResponse>) -> WatchStream {
        WatchStream { replies }
    }
}

impl Stream for WatchStream {
    type Item = Result<WatchResponse, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.replies)
            .poll_next(cx)
            .map(|next| next.map(|reply| reply.map_err(Error::from)))
    }
}
