//! Redis masters, and the only place that imports fred: connecting,
//! batching, probes and repair, the Lua scripts and their replies, and the
//! subscriber that hears published releases.

pub mod acl;
mod batch;
pub mod cluster;
mod cluster_probe;
mod conn;
pub mod connect;
mod election;
mod exclusive;
mod finish;
mod keys;
mod listing;
pub mod node;
mod permits;
mod probe;
mod probe_replies;
mod probing;
mod proof;
pub mod replies;
pub mod scripts;
mod set;
mod shared;
pub(crate) mod subscriber;
pub mod tls;
