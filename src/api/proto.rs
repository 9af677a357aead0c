//! The generated `redlockd.v1` messages, client and server.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("redlockd.v1");

/// The encoded file descriptor set, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("redlockd_descriptor");
