//! Generates the gRPC code for `proto/redlockd/v1/{lock,admin,election}.proto` with a vendored
//! `protoc`, so a fresh machine needs no system protobuf compiler.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);

    let mut prost = prost_build::Config::new();
    prost.protoc_executable(protoc);
    tonic_prost_build::configure()
        .build_client(false)
        // Small per-call buffers (src/api/codec.rs): an open Hold session costs
        // far less memory.
        .codec_path("crate::api::codec::SmallCodec")
        .file_descriptor_set_path(out_dir.join("redlockd_descriptor.bin"))
        .compile_with_config(
            prost,
            &[
                std::path::PathBuf::from("proto/redlockd/v1/lock.proto"),
                std::path::PathBuf::from("proto/redlockd/v1/admin.proto"),
                std::path::PathBuf::from("proto/redlockd/v1/election.proto"),
            ],
            &[std::path::PathBuf::from("proto"), well_known],
        )?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
