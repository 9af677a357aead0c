//! Master URLs (docs/configuration.md): one listed twice or an unusable one is
//! named.

use super::check_urls;

#[test]
fn a_master_listed_twice_or_an_unusable_url_is_named() {
    let urls = |list: &[&str]| list.iter().map(|u| (*u).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        check_urls(&urls(&["redis://a:1", "redis://b:1", "redis://a:2"])),
        Ok(())
    );
    let twice = check_urls(&urls(&["redis://a:1", "redis://b:2", "rediss://user:pw@a:1/0"]))
        .unwrap_err()
        .to_string();
    assert!(
        twice.contains("redis.nodes[2] is the same master as redis.nodes[0]"),
        "{twice}"
    );
    let bad = check_urls(&urls(&["redis://a:1", "redis://b:port"]))
        .unwrap_err()
        .to_string();
    assert!(bad.starts_with("redis.nodes[1] is not a valid Redis URL"), "{bad}");
}
