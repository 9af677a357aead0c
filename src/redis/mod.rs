//! Redis masters, and the only place that imports fred
//! (docs/design.md#layers).
//!
//! - The lock side: `node` implements `redlock::Node` over one master's
//!   connection (`conn`, reached as `connect` says, over `tls`), each
//!   operation in its lock kind: `exclusive`, `shared`, `permits`, `set`,
//!   `election` and `listing` (docs/design.md#the-lock-on-one-master), the
//!   keys beside a lock key in `keys`. Round-1 requests and releases travel
//!   in batches (`batch`, never cut short: `finish`;
//!   docs/design.md#batching), on a Redis Cluster by primary, a slot's
//!   requests on one primary's lane at a time (`cluster`, `primaries`,
//!   `tickets`, docs/design.md#cluster-positions).
//! - The scripts: every Lua script in one registry (`scripts`), their
//!   replies read by pure functions (`replies`, `probe_replies`), the script
//!   cache as proof of process (`proof`, docs/design.md#process-identity),
//!   and the ACL the daemon needs (`acl`).
//! - The monitor's side (docs/design.md#quarantine): its half of a master
//!   (`probing`), the probe and the repair (`probe`; on a cluster
//!   `cluster_probe`).
//! - Published releases, heard by the `subscriber` (docs/design.md#waiting).

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
mod primaries;
mod probe;
mod probe_replies;
mod probing;
mod proof;
pub mod replies;
pub mod scripts;
mod set;
mod shared;
pub(crate) mod subscriber;
mod tickets;
pub mod tls;
