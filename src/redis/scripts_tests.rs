//! The script registry (docs/design.md#layers): cached variants, parts
//! expanded and keys declared, flags only for servers that read them.

use super::*;

#[test]
fn the_cached_variants_drop_only_the_info_check_and_name_their_daemon() {
    let (round, hand_off) = cached_variants("n0nce");
    for (variant, full) in [(&round, &SCRIPTS.round), (&hand_off, &SCRIPTS.hand_off)] {
        assert!(variant.lua.starts_with("-- redlockd n0nce:"), "{}", variant.lua);
        assert!(!variant.lua.contains("'INFO'"), "{}", variant.lua);
        assert!(full.lua.contains("'INFO'"));
        assert_eq!(variant.keys, full.keys);
    }
    // The marker is still required: HAND_OFF reads it, ROUND where a
    // bucket's counter is missing.
    assert!(
        round
            .lua
            .contains("redis.call('EXISTS', start_of(key) .. 'verified') == 1")
    );
    assert!(hand_off.lua.contains("if marker == false then\n"));
    // Another daemon's variants are other scripts.
    assert_ne!(round.sha, cached_variants("other").0.sha);
}

#[test]
fn every_part_is_expanded_and_every_key_a_script_reads_is_declared() {
    for script in SCRIPTS
        .by_sha()
        .into_iter()
        .chain([&SCRIPTS.by_primary, &SCRIPTS.bulk_get, &SCRIPTS.bulk_repair])
    {
        assert!(!script.lua.contains("--@"), "{}", script.lua);
        // A script on one lock's keys reads KEYS[1] to KEYS[n] of its
        // layout, and no further.
        if let Keys::PerLock(roles) = script.keys
            && !script.lua.contains("#KEYS")
            && !script.lua.contains("ipairs(KEYS)")
        {
            let n = roles.len();
            assert!(
                script.lua.contains(&format!("KEYS[{n}]")),
                "KEYS[{n}] unused: {}",
                script.lua
            );
            assert!(!script.lua.contains(&format!("KEYS[{}]", n + 1)), "{}", script.lua);
        }
    }
}

/// ROUND by primary is ROUND with its requests in ARGV: the same
/// request function, the flags line first (before a cached variant's
/// nonce line), and no key read but the one that routes it.
#[test]
fn round_by_primary_is_round_over_argv_flagged_cross_slot() {
    let body = |lua: &str| {
        let from = lua.find("local function request(").unwrap();
        lua[from..from + lua[from..].find("\nend\n").unwrap()].to_owned()
    };
    let by_primary = &SCRIPTS.by_primary;
    assert!(by_primary.lua.starts_with("#!lua flags=allow-cross-slot-keys\n"));
    assert_eq!(body(&by_primary.lua), body(&SCRIPTS.round.lua));
    assert!(!by_primary.lua.contains("KEYS["), "{}", by_primary.lua);
    assert!(by_primary.lua.contains("redis.pcall('CLUSTER', 'MYID') ~= ARGV[5]"));
    assert!(by_primary.lua.contains("pcall(request, key, ARGV[a + 1], kind,"));
    assert_eq!(by_primary.text_for(7), by_primary.lua);
    let cached = cached_variant_by_primary("n0nce");
    assert!(
        cached
            .lua
            .starts_with("#!lua flags=allow-cross-slot-keys\n-- redlockd n0nce:")
    );
    assert!(!cached.lua.contains("'INFO'") && by_primary.lua.contains("'INFO'"));
    assert_eq!(body(&cached.lua), body(&cached_variants("n0nce").0.lua));
    assert_ne!(cached.sha, cached_variant_by_primary("other").sha);
}

#[test]
fn flags_go_only_to_servers_that_read_them() {
    let bulk = &SCRIPTS.bulk_repair;
    assert!(bulk.text_for(7).starts_with("#!lua flags=allow-cross-slot-keys\n"));
    assert!(
        !bulk.text_for(6).contains("#!"),
        "Redis 6.2 cannot compile a flags line"
    );
    assert!(
        SCRIPTS
            .bulk_get
            .text_for(8)
            .starts_with("#!lua flags=allow-cross-slot-keys,no-writes\n")
    );
    assert_eq!(SCRIPTS.round.text_for(7), SCRIPTS.round.lua);
}
