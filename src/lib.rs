//! redlockd: a distributed-lock daemon. Redlock over N independent Redis
//! masters, with a fencing token that strictly increases per resource,
//! served over gRPC and HTTP/JSON: exclusive and shared locks, semaphores
//! (permits), sets of resources taken at once, elections, watch and observe,
//! and an admin API. The layers depend one way (docs/design.md#layers):
//!
//! - [`app`]: the composition root — configuration in, a serving daemon
//!   out, and its ordered shutdown.
//! - [`api`]: the `Lock`, `Election` and `Admin` gRPC services and the
//!   HTTP/JSON routes beside them, the only place that speaks tonic and the
//!   proto: the streams, validation, errors as statuses, auth, health.
//! - [`locks`]: the daemon's lock semantics: the local FIFO queue, held
//!   locks, sessions and campaigns, reentrancy, watchers and observers,
//!   tenants' quotas and audit.
//! - [`redlock`]: the algorithm, free of gRPC and Redis: quorum decisions,
//!   the fencing token, the operations over `Node`s (locks, permits, sets,
//!   elections, listing), quarantine.
//! - [`redis`]: the Redis masters behind `Node`, the only place that
//!   speaks fred: connecting, batching, probes, the Lua scripts.
//! - [`config`] and [`telemetry`]: leaves every layer may use.
//! - [`dev`]: local `redis-server` masters for `redlockd dev` and tests.
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

pub mod api;
pub mod app;
pub mod config;
pub mod dev;
pub mod locks;
pub mod redis;
pub mod redlock;
pub mod telemetry;
