//! The `info_text` target: bytes read as `INFO` text and as a raw reply,
//! whose fields must come from the text; and its seeds.

use fred::types::Value;
use redlockd::redis::replies;

/// `info_text`: `data` as `INFO` text (lossy UTF-8) and as a raw reply.
pub fn check_info(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let info = replies::info_text(&text);
    for (name, field) in [
        ("role", &info.role),
        ("run_id", &info.run_id),
        ("master_replid", &info.master_replid),
    ] {
        assert_eq!(field.trim(), field, "{name} is not trimmed: {field:?}");
        assert!(!field.contains('\n'), "{name} spans lines: {field:?}");
        if !field.is_empty() {
            assert!(text.contains(&format!("{name}:")), "{name} came from nowhere");
            assert!(text.contains(field.as_str()), "{name} is not in the text");
        }
    }
    if !info.uptime.is_zero() {
        assert!(text.contains("uptime_in_seconds:"), "uptime came from nowhere");
    }
    // The same bytes as a reply: read when UTF-8, refused otherwise.
    let raw = Value::Bytes(fred::bytes::Bytes::copy_from_slice(data));
    match replies::info(raw) {
        Ok(i) => assert_eq!(i, info),
        Err(e) => assert!(std::str::from_utf8(data).is_err(), "refused UTF-8 INFO text: {e}"),
    }
}

/// `INFO` from a Redis 7 master, cut to the sections the probe reads from.
pub(crate) const INFO: &str = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\n\
process_id:4242\r\nrun_id:6a8b0f2e4c1d3e5f7a9b0c1d2e3f4a5b6c7d8e9f\r\ntcp_port:6379\r\n\
uptime_in_seconds:86400\r\nuptime_in_days:1\r\n\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\
master_failover_state:no-failover\r\nmaster_replid:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c\r\n\
master_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\n";

pub(crate) fn info_seeds() -> Vec<(String, Vec<u8>)> {
    let seeds = [
        ("master", INFO.to_owned()),
        (
            "replica",
            INFO.replace("role:master", "role:slave\r\nmaster_host:10.0.0.7\r\nmaster_port:6379"),
        ),
        (
            "lf-garbled",
            "role:master\nrun_id: abc \nuptime_in_seconds:-1\nrole:slave\n".to_owned(),
        ),
    ];
    seeds
        .into_iter()
        .map(|(n, t)| (format!("seed-{n}"), t.into_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn info_seed_is_read() {
        let info = replies::info_text(INFO);
        assert_eq!(info.role, "master");
        assert_eq!(info.uptime, Duration::from_secs(86_400));
    }
}
