//! The API (docs/design.md#layers), and the only place that imports tonic
//! or the generated proto (`proto`): three gRPC services, and HTTP/JSON
//! routes beside them on the same port (`http`, docs/http.md).
//!
//! - `redlockd.v1.Lock` (`service`): the unary calls, the sets' `…Many`
//!   calls (`set`, docs/design.md#sets), the `Hold` stream (`hold`, its
//!   replies queued in `outbox`, docs/design.md#sessions), `Pipeline`
//!   (`pipeline`) and `Watch` (`watch`, docs/design.md#observe-and-watch).
//! - `redlockd.v1.Election` (`election`): `Campaign` (`campaign`) and
//!   `Observe` (docs/design.md#elections).
//! - `redlockd.v1.Admin` (`admin`): listing and force release, the pages
//!   signed (`page_token`, docs/design.md#listing-and-force-release).
//!
//! Around them: request validation (`request`), domain → wire (`wire`),
//! what a request can end with (`error`: what the locks failed with, or a
//! caller not authenticated or not allowed) and each as a `Status`
//! (`status`), bearer-token auth and scopes (`auth`), the caller's address
//! or certificate for audit (`peer`), gRPC health (`health`), and the
//! server (`serve`) with its TLS (`tls`), its codec (`codec`) and each
//! call's span (`traced`).
//!
//! Beside `/metrics`, on its listener: the read-only status page
//! (`status_page`, docs/operations.md#status-page).

pub(crate) mod admin;
pub(crate) mod auth;
pub(crate) mod campaign;
pub(crate) mod codec;
pub(crate) mod election;
pub(crate) mod error;
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
pub(crate) mod status_page;
pub(crate) mod tls;
pub(crate) mod traced;
pub(crate) mod watch;
pub(crate) mod wire;
