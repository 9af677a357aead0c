//! The Rust client of redlockd: distributed locks with fencing tokens, over
//! gRPC, from a daemon that runs Redlock against independent Redis masters.
//!
//! ```no_run
//! # async fn example() -> Result<(), redlockd_client::Error> {
//! use std::time::Duration;
//! use redlockd_client::{Client, HoldOptions};
//!
//! let client = Client::from_env().await?; // REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA/CERT/KEY
//! let mut lock = client.hold("jobs/nightly", HoldOptions::new().wait(Duration::from_secs(5))).await?;
//! // ... write to the store with lock.fencing_token(); stop when lock.lost() resolves ...
//! lock.release().await?;
//! # Ok(()) }
//! ```
//!
//! - [`Client::acquire`] takes a lock once, or within a wait: `None` when
//!   someone else kept it (contention is a value, not an error). The
//!   [`Lease`] is extended and released by hand.
//! - [`Client::hold`] opens a `Hold` session: the daemon extends the lock
//!   for as long as the session lives and says at once when it is lost
//!   ([`HeldLock::lost`]: at LOST, or [`LOST_MARGIN`] before its validity
//!   ends with no word from the daemon); dropping the session releases the
//!   lock.
//! - [`Pipeline`]: many calls over one stream, for a process that takes
//!   many locks.
//! - [`Client::campaign`] runs for an election and resolves once elected:
//!   the [`Leadership`] carries the term (send it with every write) and
//!   [`Leadership::lost`] resolves at LOST or at the client's own deadline;
//!   dropping it resigns. [`Client::leader`], [`Client::observe`] and
//!   [`Client::watch`] are views of an election or a lock.
//!
//! Every lease's validity counts from the moment its request was SENT
//! ([`Lease::valid_until`]), the client rule of the API.
#![forbid(unsafe_code)]

mod campaign;
mod client;
mod connect;
mod election;
mod error;
mod hold;
mod lease;
mod pipeline;
pub mod proto;
mod sets;
mod trace_context;
mod views;
mod wire;

pub use campaign::{CampaignOptions, Leadership, Lost};
pub use client::{AcquireOptions, Client};
pub use connect::{AdminStub, Bearer, ElectionStub, Options, Stub, Tls};
pub use error::Error;
pub use hold::{HeldLock, HoldOptions, LOST_MARGIN};
pub use lease::Lease;
pub use pipeline::Pipeline;
pub use views::{Leader, LeaderStream, WatchStream};
pub use wire::duration as wire_duration;
