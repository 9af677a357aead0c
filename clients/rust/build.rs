//! Generates the `redlockd.v1` messages and the client stub (no server)
//! from the API contract, `proto/redlockd/v1/lock.proto` at the repository
//! root.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    let proto_root = std::path::PathBuf::from("../../proto");
    let mut prost = prost_build::Config::new();
    prost.protoc_executable(protoc);
    tonic_prost_build::configure().build_server(false).compile_with_config(
        prost,
        &[
            proto_root.join("redlockd/v1/lock.proto"),
            proto_root.join("redlockd/v1/admin.proto"),
        ],
        &[proto_root, well_known],
    )?;
    println!("cargo:rerun-if-changed=../../proto");
    Ok(())
}
