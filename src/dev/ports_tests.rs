//! Claimed ports (docs/design.md#layers): not claimed twice, not one someone
//! listens on, kept for a killed server's restart.

use super::*;

// Ports above the pool and its cluster buses, below the ephemeral range:
// no other test's server is there.

#[test]
fn a_claimed_port_is_not_claimed_again_until_its_claim_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let first = claim_in(dir.path(), 30_000..30_002).unwrap();
    let second = claim_in(dir.path(), 30_000..30_002).unwrap();
    assert_ne!(first.port(), second.port());
    let refused = claim_in(dir.path(), 30_000..30_002).unwrap_err().to_string();
    assert!(refused.contains("no free port in 30000..30002"), "{refused}");
    let port = first.port();
    drop(first);
    assert_eq!(claim_in(dir.path(), 30_000..30_002).unwrap().port(), port);
}

#[test]
fn a_port_someone_listens_on_is_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, 30_010)) else {
        panic!("port 30010 is needed free for this test");
    };
    let refused = claim_in(dir.path(), 30_010..30_011).unwrap_err().to_string();
    assert!(refused.contains("taken"), "{refused}");
    drop(listener);
    assert_eq!(claim_in(dir.path(), 30_010..30_011).unwrap().port(), 30_010);
}

#[test]
fn a_killed_server_keeps_its_port_claimed_for_its_restart() {
    let binary = super::super::find_redis_server().unwrap();
    assert!(
        below_the_ephemeral_range(POOL).is_some(),
        "the pool overlaps the ephemeral range"
    );
    let mut server = super::super::RedisProcess::start(&binary, &[]).unwrap();
    let port = server.port();
    assert!(POOL.contains(&port), "{port}");
    server.kill();
    let refused = claim_in(&claims_dir().unwrap(), port..port + 1)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("claimed"), "{refused}");
    server.restart_empty().unwrap();
    assert_eq!(server.port(), port);
}
