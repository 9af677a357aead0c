//! Local masters (docs/design.md#layers): a server whose port was taken
//! meanwhile is not mistaken for the one there, and moves.

use super::*;

/// A server not yet started, on `port`.
fn unstarted(binary: &Path, port: u16) -> RedisProcess {
    RedisProcess {
        binary: binary.to_owned(),
        port: PortClaim::unclaimed(port),
        also: Vec::new(),
        dir: tempfile::Builder::new().prefix("redlockd-redis-").tempdir().unwrap(),
        extra: Vec::new(),
        child: None,
    }
}

#[test]
fn a_server_whose_port_was_taken_meanwhile_is_not_mistaken_for_the_one_there_and_moves() {
    let Ok(binary) = find_redis_server() else {
        panic!("redis-server is needed: run scripts/test, which installs it");
    };
    let there = RedisProcess::start(&binary, &[]).unwrap();
    // The port another server took between free_port() and the spawn.
    let mut late = unstarted(&binary, there.port());
    let refused = late.spawn().unwrap_err().to_string();
    assert!(refused.contains("Address already in use"), "{refused}");
    late.spawn_on_a_free_port().unwrap();
    assert_ne!(late.port(), there.port());
    ping(late.port()).unwrap();
    assert!(late.pid().is_some() && late.pid() != there.pid());
}
