//! Generates the `redlockd.v1` messages and the client stub (no server)
//! from the API contract, `proto/redlockd/v1/{lock,admin,election}.proto`.
//!
//! `proto` in this crate is a symbolic link to the repository's `proto/`, so
//! that `cargo package` ships the files (a packaged crate cannot reach
//! `../../proto`); where the link is not kept (a copy that drops symbolic
//! links), the repository's folder is used directly.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    let proto_root = ["proto", "../../proto"]
        .map(PathBuf::from)
        .into_iter()
        .find(|root| root.join("redlockd/v1/lock.proto").is_file())
        .ok_or("no proto/redlockd/v1/lock.proto in this crate nor in ../../proto")?;
    let files = [
        proto_root.join("redlockd/v1/lock.proto"),
        proto_root.join("redlockd/v1/admin.proto"),
        proto_root.join("redlockd/v1/election.proto"),
    ];
    let mut prost = prost_build::Config::new();
    prost.protoc_executable(protoc);
    tonic_prost_build::configure()
        .build_server(false)
        .compile_with_config(prost, &files, &[proto_root, well_known])?;
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    Ok(())
}
