//! The generated `redlockd.v1` messages, client and server, and their
//! proto3 JSON mapping (docs/http.md#json).
#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("redlockd.v1");
include!(concat!(env!("OUT_DIR"), "/redlockd.v1.serde.rs"));

/// The encoded file descriptor set, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("redlockd_descriptor");
