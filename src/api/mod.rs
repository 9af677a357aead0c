//! The gRPC API, and the only place that imports tonic or the generated
//! proto: the `redlockd.v1.Lock` service, the `Hold` and `Pipeline`
//! streams, request validation, domain → wire, every error → `Status`,
//! bearer-token auth and gRPC health.

pub mod auth;
pub mod codec;
pub mod health;
pub mod hold;
pub mod outbox;
pub mod pipeline;
pub mod proto;
pub mod request;
pub mod serve;
pub mod service;
pub mod status;
