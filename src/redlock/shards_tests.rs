//! Quarantine per shard on synthetic probes of a three-primary cluster.

use super::*;
use crate::redlock::rules::SHORTEST_HOLD;
use crate::redlock::standing::{NodeHealth, Observation, Standing, Verdict};

const MAX_TTL: Duration = Duration::from_secs(60);

fn rules(quarantine: bool) -> Rules {
    Rules {
        quarantine,
        max_ttl: MAX_TTL,
        clock_jump_bound: Duration::from_millis(500),
    }
}

/// Primary `i` of three, serving a third of the slots each.
fn primary(i: u16, identity: &str, verified: bool) -> ShardSeen {
    let ranges = match i {
        0 => vec![(0, 5460)],
        1 => vec![(5461, 10922)],
        _ => vec![(10923, 16383)],
    };
    ShardSeen {
        address: format!("10.0.0.{i}:7000"),
        ranges,
        identity: identity.into(),
        uptime: Duration::from_secs(3600),
        verified,
    }
}

fn healthy() -> Vec<ShardSeen> {
    vec![
        primary(0, "a:1", true),
        primary(1, "b:1", true),
        primary(2, "c:1", true),
    ]
}

/// The cluster's clock runs with ours from `t0` on.
fn cluster(t0: Instant, now: Instant, shards: Vec<ShardSeen>) -> Observation {
    Observation {
        role: "master".into(),
        maxmemory_policy: "noeviction".into(),
        run_id: String::new(),
        master_replid: String::new(),
        uptime: Duration::from_secs(3600),
        node_time_us: 1_700_000_000_000_000 + now.duration_since(t0).as_micros() as u64,
        sampled_at: now,
        time_uncertainty: Duration::from_micros(100),
        scripts_loaded: Ok(()),
        marker: None,
        shards,
    }
}

/// Probes the way the monitor does: the verdict, then the shards' repair.
fn probe(health: &NodeHealth, t0: Instant, shards: Vec<ShardSeen>, quarantine: bool) -> Vec<u16> {
    let now = Instant::now();
    match health.assess(&cluster(t0, now, shards), &rules(quarantine), now) {
        Verdict::Usable => health.set(Standing::Usable),
        other => panic!("a cluster position is usable as a whole here, not {other:?}"),
    }
    let repaired = health.buckets_to_repair();
    health.buckets_repaired(&repaired);
    repaired
}

fn counts(health: &NodeHealth, bucket: u16) -> bool {
    health.standing_for(bucket) == Standing::Usable
}

#[tokio::test(start_paused = true)]
async fn a_promoted_replica_holds_out_its_own_buckets_only_until_they_are_repaired() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    probe(&health, t0, healthy(), true);
    assert!(counts(&health, 0) && counts(&health, 8000) && counts(&health, 16383));

    // Primary 1's replica took over: another identity, another address,
    // and the markers it inherited name the old primary.
    let mut failed_over = healthy();
    failed_over[1] = ShardSeen {
        address: "10.0.0.9:7000".into(),
        ..primary(1, "d:2", false)
    };
    assert_eq!(probe(&health, t0, failed_over.clone(), true), Vec::<u16>::new());
    assert!(
        counts(&health, 0) && counts(&health, 16383),
        "the other shards keep the vote"
    );
    assert!(matches!(health.standing_for(5461), Standing::Quarantined { .. }));
    assert!(!health.verified_for(8000) && health.verified_for(0));

    tokio::time::advance(MAX_TTL / 2).await;
    assert_eq!(
        probe(&health, t0, failed_over.clone(), true),
        Vec::<u16>::new(),
        "one event, one hold"
    );
    assert!(!counts(&health, 10922));

    tokio::time::advance(MAX_TTL / 2 + Duration::from_millis(1)).await;
    let repaired = probe(&health, t0, failed_over.clone(), true);
    assert_eq!(repaired, (5461..=10922).collect::<Vec<u16>>());
    assert!(counts(&health, 5461) && counts(&health, 10922) && health.verified_for(8000));

    // The repair wrote its markers: it is verified from now on.
    failed_over[1].verified = true;
    assert_eq!(probe(&health, t0, failed_over, true), Vec::<u16>::new());
    assert!(counts(&health, 8000));
}

#[tokio::test(start_paused = true)]
async fn a_restarted_primary_is_held_out_although_its_markers_came_back_with_its_data() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    probe(&health, t0, healthy(), true);
    let mut restarted = healthy();
    restarted[2] = primary(2, "e:1", true);
    probe(&health, t0, restarted, true);
    assert!(!counts(&health, 16383) && counts(&health, 10922));
}

#[tokio::test(start_paused = true)]
async fn moved_slots_alone_are_held_out_and_repaired() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    probe(&health, t0, healthy(), true);
    // Slots 0..=99 moved from primary 0 to primary 2.
    let mut resharded = healthy();
    resharded[0].ranges = vec![(100, 5460)];
    resharded[2].ranges = vec![(0, 99), (10923, 16383)];
    probe(&health, t0, resharded.clone(), true);
    assert!(!counts(&health, 0) && !counts(&health, 99));
    assert!(counts(&health, 100) && counts(&health, 10923));

    tokio::time::advance(MAX_TTL + Duration::from_millis(1)).await;
    assert_eq!(probe(&health, t0, resharded, true), (0..=99).collect::<Vec<u16>>());
    assert!(counts(&health, 0));
}

#[tokio::test(start_paused = true)]
async fn a_young_primary_is_held_out_until_it_was_up_for_max_ttl_and_needs_no_repair() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    let mut young = healthy();
    young[0].uptime = Duration::from_secs(10);
    probe(&health, t0, young.clone(), true);
    assert!(!counts(&health, 0) && counts(&health, 5461));

    tokio::time::advance(MAX_TTL - Duration::from_secs(10) + Duration::from_millis(1)).await;
    young[0].uptime = Duration::from_secs(60);
    assert_eq!(
        probe(&health, t0, young, true),
        Vec::<u16>::new(),
        "its data was vouched for all along"
    );
    assert!(counts(&health, 0));
}

/// A `max_ttl` shorter than two seed windows still holds a restarted
/// primary's buckets out for two seconds (docs/design.md#the-fencing-token).
#[tokio::test(start_paused = true)]
async fn a_short_max_ttl_still_holds_a_restarted_primary_for_two_seed_windows() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    let short = Rules {
        max_ttl: Duration::from_millis(100),
        ..rules(true)
    };
    let assess = |shards: Vec<ShardSeen>| {
        let now = Instant::now();
        let verdict = health.assess(&cluster(t0, now, shards), &short, now);
        assert_eq!(verdict, Verdict::Usable);
        health.set(Standing::Usable);
    };
    assess(healthy());
    let mut restarted = healthy();
    restarted[0] = primary(0, "a:2", false);
    restarted[0].uptime = Duration::ZERO;
    assess(restarted.clone());
    tokio::time::advance(Duration::from_millis(500)).await;
    assess(restarted.clone());
    assert!(!counts(&health, 0) && counts(&health, 5461), "out past max_ttl");
    assert_eq!(health.buckets_to_repair(), Vec::<u16>::new());
    tokio::time::advance(SHORTEST_HOLD).await;
    restarted[0].uptime = Duration::from_secs(3);
    assess(restarted);
    assert_eq!(health.buckets_to_repair(), (0..=5460).collect::<Vec<u16>>());
}

#[tokio::test(start_paused = true)]
async fn without_quarantine_an_unverified_shard_is_adopted_at_once() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    let mut fresh = healthy();
    fresh[0].verified = false;
    assert_eq!(probe(&health, t0, fresh, false), (0..=5460).collect::<Vec<u16>>());
    assert!(counts(&health, 0));
}

#[tokio::test(start_paused = true)]
async fn a_new_cluster_is_held_out_as_a_whole_for_max_ttl() {
    let (health, t0) = (NodeHealth::default(), Instant::now());
    let fresh: Vec<ShardSeen> = (0..3).map(|i| primary(i, &format!("{i}:1"), false)).collect();
    assert_eq!(probe(&health, t0, fresh.clone(), true), Vec::<u16>::new());
    assert!((0..3).all(|i| !counts(&health, i * 6000)));
    tokio::time::advance(MAX_TTL + Duration::from_millis(1)).await;
    assert_eq!(probe(&health, t0, fresh, true).len(), usize::from(BUCKETS));
}
