//! The generated `redlockd.v1` messages and the `Lock` client stub, for
//! calls this crate does not wrap.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("redlockd.v1");
