//! Generates the gRPC code for `proto/redlockd/v1/{lock,admin,election}.proto` with a vendored
//! `protoc`, so a fresh machine needs no system protobuf compiler, and the proto3 JSON
//! mapping of every message for HTTP/JSON (docs/http.md#json).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptors = out_dir.join("redlockd_descriptor.bin");

    let mut prost = prost_build::Config::new();
    prost.protoc_executable(protoc);
    tonic_prost_build::configure()
        // Duration and Timestamp with serde impls ("1.5s", RFC 3339) for the JSON
        // mapping; the same protobuf encoding as prost-types'.
        .compile_well_known_types(true)
        .extern_path(".google.protobuf", "::pbjson_types")
        .build_client(false)
        // Small per-call buffers (src/api/codec.rs): an open Hold session costs
        // far less memory.
        .codec_path("crate::api::codec::SmallCodec")
        .file_descriptor_set_path(&descriptors)
        .compile_with_config(
            prost,
            &[
                std::path::PathBuf::from("proto/redlockd/v1/lock.proto"),
                std::path::PathBuf::from("proto/redlockd/v1/admin.proto"),
                std::path::PathBuf::from("proto/redlockd/v1/election.proto"),
            ],
            // proto/ also holds google/api/{annotations,http}.proto (vendor/README.md).
            &[std::path::PathBuf::from("proto"), well_known],
        )?;
    // lowerCamel names out, both spellings in, unknown fields refused, 64-bit
    // integers as strings, every scalar field written even when zero (a shell
    // script reads `.acquired` whether it is true or false).
    pbjson_build::Builder::new()
        .register_descriptors(&std::fs::read(&descriptors)?)?
        .extern_path(".google.protobuf", "::pbjson_types")
        .emit_fields()
        .build(&[".redlockd.v1"])?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
