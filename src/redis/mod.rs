//! Redis masters, and the only place that imports fred: connecting,
//! batching, probes and repair, the Lua scripts and their replies, and the
//! subscriber that hears published releases.

pub mod acl;
mod batch;
pub mod cluster;
mod cluster_probe;
pub mod connect;
mod election;
mod eval;
mod keys;
mod listing;
pub mod many;
pub mod node;
pub mod permits;
mod probe;
mod probe_replies;
mod proof;
pub mod replies;
pub mod scripts;
pub mod shared;
pub(crate) mod subscriber;
pub mod tls;
