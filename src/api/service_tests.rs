//! The gRPC service's helpers: grpc-timeout read in every unit
//! (docs/design.md#layers).

use super::*;

#[test]
fn grpc_timeouts_are_read_in_every_unit() {
    let cases = [
        ("2H", Some(Duration::from_secs(7200))),
        ("3M", Some(Duration::from_secs(180))),
        ("4S", Some(Duration::from_secs(4))),
        ("250m", Some(Duration::from_millis(250))),
        ("7u", Some(Duration::from_micros(7))),
        ("9n", Some(Duration::from_nanos(9))),
        ("9x", None),
        ("m", None),
    ];
    for (raw, want) in cases {
        let mut metadata = MetadataMap::new();
        metadata.insert("grpc-timeout", raw.parse().unwrap());
        assert_eq!(grpc_timeout(&metadata), want, "{raw}");
    }
}
