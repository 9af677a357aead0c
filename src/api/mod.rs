//! The gRPC API, and the only place that imports tonic or the generated
//! proto: the `redlockd.v1.Lock` service, the `Hold` and `Pipeline`
//! streams, request validation, domain → wire, every error → `Status`,
//! bearer-token auth and gRPC health.

pub(crate) mod admin;
pub(crate) mod auth;
pub(crate) mod campaign;
pub(crate) mod codec;
pub(crate) mod election;
pub mod health;
pub(crate) mod hold;
pub(crate) mod http;
pub(crate) mod outbox;
pub(crate) mod page_token;
pub(crate) mod peer;
pub(crate) mod pipeline;
pub mod proto;
pub mod request;
pub(crate) mod serve;
pub(crate) mod service;
pub(crate) mod set;
pub(crate) mod status;
pub(crate) mod tls;
pub(crate) mod traced;
pub(crate) mod watch;
pub(crate) mod wire;
