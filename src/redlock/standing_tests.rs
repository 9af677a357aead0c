//! The quarantine and preflight rules on synthetic probes.

use super::*;
use crate::redlock::rules::SHORTEST_HOLD;

const MAX_TTL: Duration = Duration::from_secs(60);

fn rules() -> Rules {
    Rules {
        quarantine: true,
        max_ttl: MAX_TTL,
        clock_jump_bound: Duration::from_millis(500),
    }
}

fn healthy(now: Instant) -> Observation {
    Observation {
        role: "master".into(),
        maxmemory_policy: "noeviction".into(),
        run_id: "run-1".into(),
        master_replid: "repl-1".into(),
        uptime: Duration::from_secs(3600),
        node_time_us: 1_700_000_000_000_000,
        sampled_at: now,
        time_uncertainty: Duration::from_micros(100),
        scripts_loaded: Ok(()),
        marker: Some("run-1:repl-1".into()),
        shards: Vec::new(),
    }
}

/// Probes `obs` and applies the verdict the way the monitor does.
fn probe(health: &NodeHealth, obs: &Observation, rules: &Rules, now: Instant) -> Verdict {
    let verdict = health.assess(obs, rules, now);
    match &verdict {
        Verdict::Usable | Verdict::Adopt | Verdict::RepairThenUsable => health.set(Standing::Usable),
        Verdict::Quarantine(standing) => health.set(standing.clone()),
        Verdict::Fail(check, reason) => health.set(Standing::Failed {
            check: *check,
            reason: reason.clone(),
        }),
    }
    verdict
}

fn quarantined_until(verdict: &Verdict) -> Instant {
    match verdict {
        Verdict::Quarantine(Standing::Quarantined { until, .. }) => *until,
        other => panic!("expected a quarantine, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_long_running_verified_master_is_usable_at_once() {
    let health = NodeHealth::default();
    let now = Instant::now();
    assert_eq!(probe(&health, &healthy(now), &rules(), now), Verdict::Usable);
    assert_eq!(probe(&health, &healthy(now), &rules(), now), Verdict::Usable);
}

#[tokio::test(start_paused = true)]
async fn a_new_master_waits_max_ttl_then_is_repaired_once() {
    let health = NodeHealth::default();
    let now = Instant::now();
    let new = Observation {
        uptime: Duration::from_secs(3600),
        marker: None,
        ..healthy(now)
    };
    assert_eq!(quarantined_until(&probe(&health, &new, &rules(), now)), now + MAX_TTL);
    // Still unmarked later: the same event, not a new one every probe.
    let later = now + MAX_TTL + Duration::from_millis(1);
    let still = Observation {
        node_time_us: new.node_time_us + (MAX_TTL.as_micros() as u64) + 1_000,
        sampled_at: later,
        ..new.clone()
    };
    assert_eq!(probe(&health, &still, &rules(), later), Verdict::RepairThenUsable);
    // The repair wrote the marker: from now on it is verified.
    let marked = Observation {
        marker: Some("run-1:repl-1".into()),
        ..still
    };
    assert_eq!(probe(&health, &marked, &rules(), later), Verdict::Usable);
}

/// A `max_ttl` shorter than two seed windows: a master that lost its data
/// is still held out for two seconds, so the counters it seeds again from
/// its clock lie above the ones it handed out (docs/design.md#the-fencing-token).
#[tokio::test(start_paused = true)]
async fn a_short_max_ttl_still_holds_a_master_that_lost_its_data_for_two_seed_windows() {
    let short = Rules {
        max_ttl: Duration::from_millis(100),
        ..rules()
    };
    assert_eq!(short.hold(), SHORTEST_HOLD);
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &short, now);
    let restarted = Observation {
        run_id: "run-2".into(),
        uptime: Duration::ZERO,
        marker: None,
        ..healthy(now)
    };
    assert_eq!(
        quarantined_until(&probe(&health, &restarted, &short, now)),
        now + SHORTEST_HOLD
    );
    // Past max_ttl but inside the hold: still out.
    let later = now + Duration::from_millis(500);
    let young = Observation {
        node_time_us: restarted.node_time_us + 500_000,
        sampled_at: later,
        ..restarted.clone()
    };
    assert_eq!(
        quarantined_until(&probe(&health, &young, &short, later)),
        now + SHORTEST_HOLD
    );
    let past = now + SHORTEST_HOLD + Duration::from_millis(1);
    let grown = Observation {
        uptime: Duration::from_secs(3),
        node_time_us: restarted.node_time_us + 2_001_000,
        sampled_at: past,
        ..restarted
    };
    assert_eq!(probe(&health, &grown, &short, past), Verdict::RepairThenUsable);
}

#[tokio::test(start_paused = true)]
async fn a_young_master_with_its_data_waits_until_it_has_been_up_for_max_ttl() {
    let health = NodeHealth::default();
    let now = Instant::now();
    let young = Observation {
        uptime: Duration::from_secs(20),
        ..healthy(now)
    };
    let verdict = probe(&health, &young, &rules(), now);
    assert_eq!(quarantined_until(&verdict), now + Duration::from_secs(40));
    let later = now + Duration::from_secs(41);
    let grown = Observation {
        uptime: Duration::from_secs(61),
        node_time_us: young.node_time_us + 41_000_000,
        sampled_at: later,
        ..young
    };
    // Its marker vouches for its data: no repair needed.
    assert_eq!(probe(&health, &grown, &rules(), later), Verdict::Usable);
}

#[tokio::test(start_paused = true)]
async fn a_flushed_master_is_quarantined_even_when_a_reply_already_made_it_unverified() {
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &rules(), now);
    health.invalidate();
    let flushed = Observation {
        marker: None,
        ..healthy(now)
    };
    assert_eq!(
        quarantined_until(&probe(&health, &flushed, &rules(), now)),
        now + MAX_TTL
    );
}

#[tokio::test(start_paused = true)]
async fn a_marker_naming_another_process_quarantines_even_a_daemon_that_never_saw_the_old_one() {
    // A promoted replica carries its old master's marker.
    let health = NodeHealth::default();
    let now = Instant::now();
    let promoted = Observation {
        run_id: "replica".into(),
        master_replid: "repl-2".into(),
        ..healthy(now)
    };
    assert_eq!(
        quarantined_until(&probe(&health, &promoted, &rules(), now)),
        now + MAX_TTL
    );
}

#[tokio::test(start_paused = true)]
async fn a_probe_that_raced_a_reconnect_is_not_applied() {
    let health = NodeHealth::default();
    let generation = health.generation();
    health.invalidate();
    assert!(!health.set_if_current(generation, Standing::Usable));
    assert_eq!(health.standing(), Standing::Unverified);
    assert!(health.set_if_current(health.generation(), Standing::Usable));
}

#[tokio::test(start_paused = true)]
async fn a_restart_or_failover_quarantines_for_max_ttl() {
    for (run_id, replid) in [("run-2", "repl-1"), ("run-1", "repl-2")] {
        let health = NodeHealth::default();
        let now = Instant::now();
        probe(&health, &healthy(now), &rules(), now);
        let moved = Observation {
            run_id: run_id.into(),
            master_replid: replid.into(),
            ..healthy(now)
        };
        assert_eq!(quarantined_until(&probe(&health, &moved, &rules(), now)), now + MAX_TTL);
    }
}

#[tokio::test(start_paused = true)]
async fn a_clock_jump_beyond_the_bound_quarantines_and_drift_within_it_does_not() {
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &rules(), now);
    // One second later by our clock; the node's clock moved 1.3 s.
    let later = now + Duration::from_secs(1);
    let small = Observation {
        node_time_us: healthy(now).node_time_us + 1_300_000,
        sampled_at: later,
        ..healthy(now)
    };
    assert_eq!(probe(&health, &small, &rules(), later), Verdict::Usable);
    let even_later = later + Duration::from_secs(1);
    let jumped = Observation {
        node_time_us: small.node_time_us + 1_000_000 + 5_000_000,
        sampled_at: even_later,
        ..small
    };
    assert_eq!(
        quarantined_until(&probe(&health, &jumped, &rules(), even_later)),
        even_later + MAX_TTL
    );
}

#[tokio::test(start_paused = true)]
async fn preflight_refuses_replicas_evicting_policies_and_broken_scripts() {
    let now = Instant::now();
    let cases = [
        (
            Observation {
                role: "slave".into(),
                ..healthy(now)
            },
            "role",
        ),
        (
            Observation {
                maxmemory_policy: "allkeys-lru".into(),
                ..healthy(now)
            },
            "noeviction",
        ),
        (
            Observation {
                scripts_loaded: Err(ScriptRefused { reply: "NOPERM".into() }),
                ..healthy(now)
            },
            "scripts",
        ),
    ];
    for (obs, named) in cases {
        match NodeHealth::default().assess(&obs, &rules(), now) {
            Verdict::Fail(_, reason) => assert!(reason.contains(named), "{reason}"),
            other => panic!("expected a failed preflight, got {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn with_quarantine_off_a_restarted_master_is_used_at_once() {
    let rules = Rules {
        quarantine: false,
        ..rules()
    };
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &rules, now);
    let restarted = Observation {
        run_id: "run-2".into(),
        uptime: Duration::from_secs(1),
        marker: None,
        ..healthy(now)
    };
    assert_eq!(probe(&health, &restarted, &rules, now), Verdict::Adopt);
}

#[tokio::test(start_paused = true)]
async fn a_new_reason_never_shortens_a_running_quarantine() {
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &rules(), now);
    let restarted = Observation {
        run_id: "run-2".into(),
        ..healthy(now)
    };
    let first = quarantined_until(&probe(&health, &restarted, &rules(), now));
    let soon = now + Duration::from_secs(10);
    let young = Observation {
        uptime: Duration::from_secs(55),
        sampled_at: soon,
        node_time_us: restarted.node_time_us + 10_000_000,
        ..restarted
    };
    assert_eq!(quarantined_until(&probe(&health, &young, &rules(), soon)), first);
}

#[tokio::test(start_paused = true)]
async fn a_slow_time_round_trip_is_not_taken_for_a_clock_jump() {
    let health = NodeHealth::default();
    let now = Instant::now();
    probe(&health, &healthy(now), &rules(), now);
    // The TIME reply took 3 s: the sample's midpoint may be 1.5 s off.
    let later = now + Duration::from_secs(5);
    let slow = Observation {
        node_time_us: healthy(now).node_time_us + 5_000_000 - 1_400_000,
        sampled_at: later,
        time_uncertainty: Duration::from_millis(1500),
        ..healthy(now)
    };
    assert_eq!(probe(&health, &slow, &rules(), later), Verdict::Usable);
}
