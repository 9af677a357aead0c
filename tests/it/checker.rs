//! The safety checker of the fault-injection tests, run against synthetic histories: a clean history
//! passes, and each kind of violation planted in a history is caught.

use crate::support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::history::{
    FencedStore, Grant, History, Kind, OpId, Options, Reply, UnfencedStore, Violation, ViolationKind, Write,
};
use support::history::{Report, check};
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Records an operation sent at `invoke` ms and answered at `complete` ms after the history's epoch.
fn op(h: &History, client: &str, resource: &str, kind: Kind, (invoke, complete): (u64, u64), reply: Reply) -> OpId {
    let id = h.invoke_at(client, resource, kind, h.at(ms(invoke)));
    h.complete_at(id, reply, h.at(ms(complete)));
    id
}

/// A granted acquire with the given token and validity (ms); returns the lease value.
fn grant(h: &History, client: &str, resource: &str, times: (u64, u64), token: u64, validity: u64) -> String {
    let value = format!("{client}/{token}");
    let reply = Reply::Granted(Grant {
        token,
        validity: ms(validity),
        value: value.clone(),
        shared: false,
        ..Grant::default()
    });
    op(h, client, resource, Kind::Acquire, times, reply);
    value
}

/// A release sent at `at` ms, answered 1 ms later with `reply`.
fn release(h: &History, client: &str, resource: &str, value: &str, at: u64, reply: Reply) {
    op(h, client, resource, Kind::Release(value.into()), (at, at + 1), reply);
}

fn check_history(h: &History, drift_margin_ms: u64) -> Report {
    check(
        h,
        &[],
        Options {
            drift_margin: ms(drift_margin_ms),
            ..Options::default()
        },
    )
}

fn only(report: &Report, kind: ViolationKind) -> &Violation {
    assert_eq!(report.violations.len(), 1, "expected exactly one {kind:?}: {report}");
    assert_eq!(report.violations[0].kind(), kind, "{report}");
    &report.violations[0]
}

#[test]
fn a_clean_history_passes_and_is_counted() {
    let h = History::new();
    let store = FencedStore::new("ledger");
    let v1 = grant(&h, "c1", "r", (0, 10), 100, 1000);
    store.write("c1", 100, "a").unwrap();
    op(&h, "c2", "r", Kind::Acquire, (5, 15), Reply::Fail);
    op(&h, "c2", "r", Kind::Acquire, (20, 70), Reply::Unknown);
    h.invoke_at("c3", "r", Kind::Acquire, h.at(ms(30)));
    op(
        &h,
        "c1",
        "r",
        Kind::Extend(v1.clone()),
        (500, 510),
        Reply::Extended(ms(1000)),
    );
    store.write("c1", 100, "b").unwrap();
    release(&h, "c1", "r", &v1, 1200, Reply::Released);
    let v2 = grant(&h, "c2", "r", (1100, 1210), 117, 1000);
    store.write("c2", 117, "c").unwrap();
    release(&h, "c2", "r", &v2, 1500, Reply::Released);
    grant(&h, "c3", "s", (0, 5), 50, 1000);

    let counter = UnfencedStore::new("counter"); // stores of both kinds audited together
    counter.write("c2", counter.read() + 1);

    let report = check(&h, &[&store, &counter], Options::default());
    report.assert_safe();
    let s = &report.stats;
    assert_eq!(
        (s.ops, s.acquires, s.grants, s.extends, s.releases),
        (9, 6, 3, 1, 2),
        "{report}"
    );
    assert_eq!((s.failed, s.unknown, s.writes, s.rejected), (1, 2, 4, 0), "{report}");
    assert!(report.to_string().ends_with("violations: none"), "{report}");
}

#[test]
fn overlapping_validity_windows_are_caught() {
    let h = History::new();
    grant(&h, "c1", "r", (0, 10), 1, 1000);
    grant(&h, "c2", "r", (400, 500), 2, 1000);

    let report = check_history(&h, 0);
    let Violation::Overlap(first, second, overlap) = only(&report, ViolationKind::Overlap) else {
        panic!()
    };
    assert_eq!(
        (first.resource.as_str(), first.token, second.token, *overlap),
        ("r", 1, 2, ms(500))
    );
    let message = report.violations[0].to_string();
    assert!(
        message.starts_with("Overlap on r: c1 token 1 (acquire #0 sent t+0.000s, granted t+0.010s"),
        "{message}"
    );
}

#[test]
fn a_release_ends_the_window_at_its_invoke_even_when_its_reply_is_unknown() {
    let h = History::new();
    for resource in ["released", "kept"] {
        let value = grant(&h, "c1", resource, (0, 10), 1, 1000);
        if resource == "released" {
            release(&h, "c1", resource, &value, 300, Reply::Unknown);
        }
        grant(&h, "c2", resource, (310, 320), 2, 1000);
    }

    let report = check_history(&h, 0);
    let Violation::Overlap(first, ..) = only(&report, ViolationKind::Overlap) else {
        panic!()
    };
    assert_eq!(first.resource, "kept");
}

#[test]
fn a_successful_extend_lengthens_the_window_and_a_failed_one_does_not() {
    let h = History::new();
    for (resource, reply) in [("extended", Reply::Extended(ms(1000))), ("refused", Reply::Fail)] {
        let value = grant(&h, "c1", resource, (0, 10), 1, 1000);
        op(&h, "c1", resource, Kind::Extend(value), (900, 910), reply);
        grant(&h, "c2", resource, (1400, 1500), 2, 1000);
    }

    let report = check_history(&h, 0);
    let Violation::Overlap(first, _, overlap) = only(&report, ViolationKind::Overlap) else {
        panic!()
    };
    assert_eq!((first.resource.as_str(), *overlap), ("extended", ms(400)));
}

#[test]
fn an_overlap_within_the_drift_margin_is_tolerated_and_beyond_it_is_caught() {
    let h = History::new();
    grant(&h, "c1", "r", (0, 10), 1, 1000);
    grant(&h, "c2", "r", (990, 995), 2, 1000);

    check_history(&h, 5).assert_safe();
    check_history(&h, 10).assert_safe();
    let report = check_history(&h, 4);
    let Violation::Overlap(_, _, overlap) = only(&report, ViolationKind::Overlap) else {
        panic!()
    };
    assert_eq!(*overlap, ms(5));
}

#[test]
fn a_token_that_goes_down_in_real_time_order_is_caught() {
    let h = History::new();
    let value = grant(&h, "c1", "r", (0, 10), 100, 1000);
    release(&h, "c1", "r", &value, 50, Reply::Released);
    grant(&h, "c2", "r", (60, 70), 90, 1000);

    let report = check_history(&h, 0);
    let Violation::TokenOrder(earlier, later) = only(&report, ViolationKind::TokenOrder) else {
        panic!()
    };
    assert_eq!(
        (
            earlier.client.as_str(),
            earlier.token,
            later.client.as_str(),
            later.token
        ),
        ("c1", 100, "c2", 90)
    );
}

#[test]
fn the_same_token_granted_twice_is_a_duplicate_also_when_concurrent() {
    let h = History::new();
    let value = grant(&h, "c1", "sequential", (0, 10), 7, 1000);
    release(&h, "c1", "sequential", &value, 50, Reply::Released);
    grant(&h, "c2", "sequential", (60, 70), 7, 1000);
    let value = grant(&h, "c3", "concurrent", (0, 20), 9, 1000);
    release(&h, "c3", "concurrent", &value, 21, Reply::Released);
    grant(&h, "c4", "concurrent", (10, 30), 9, 1000);

    let report = check_history(&h, 0);
    assert_eq!(report.count(ViolationKind::TokenDuplicate), 2, "{report}");
    assert_eq!(
        report.count(ViolationKind::TokenOrder),
        1,
        "equal tokens in real-time order: {report}"
    );
    assert_eq!(report.violations.len(), 3, "{report}");
}

#[test]
fn concurrent_acquires_with_decreasing_tokens_are_not_a_token_order_violation() {
    let h = History::new();
    let value = grant(&h, "c1", "r", (0, 50), 100, 1000);
    release(&h, "c1", "r", &value, 55, Reply::Released);
    let value = grant(&h, "c2", "r", (40, 60), 90, 1000);
    release(&h, "c2", "r", &value, 62, Reply::Released);
    check_history(&h, 0).assert_safe();

    // Sent after c1's grant came back: its token must beat c1's, not only c2's.
    grant(&h, "c3", "r", (51, 70), 95, 1000);
    let report = check_history(&h, 0);
    let Violation::TokenOrder(earlier, later) = only(&report, ViolationKind::TokenOrder) else {
        panic!()
    };
    assert_eq!((earlier.token, later.token), (100, 95));
}

#[test]
fn failed_unknown_and_pending_acquires_are_not_grants() {
    let h = History::new();
    grant(&h, "c1", "r", (0, 10), 5, 1000);
    op(&h, "c2", "r", Kind::Acquire, (100, 200), Reply::Unknown);
    op(&h, "c3", "r", Kind::Acquire, (150, 160), Reply::Fail);
    h.invoke_at("c4", "r", Kind::Acquire, h.at(ms(300)));

    let report = check_history(&h, 0);
    report.assert_safe();
    assert_eq!(
        (report.stats.grants, report.stats.failed, report.stats.unknown),
        (1, 1, 2)
    );
}

#[test]
#[should_panic(expected = "cannot complete with Released")]
fn an_acquire_completed_with_a_release_reply_is_a_recording_error() {
    let h = History::new();
    let id = h.invoke("c1", "r", Kind::Acquire);
    h.complete(id, Reply::Released);
}

#[test]
fn a_fenced_store_refuses_stale_tokens_and_the_checker_reports_nothing() {
    let store = FencedStore::new("ledger");
    assert_eq!(store.write("c1", 5, "first"), Ok(()));
    assert_eq!(store.write("c1", 5, "again"), Ok(()), "the holder may repeat writes");
    assert_eq!(
        store.write("c2", 5, "dup"),
        Err(5),
        "an equal token from another client"
    );
    assert_eq!(store.write("c0", 3, "stale"), Err(5));
    assert_eq!(store.write("c3", 8, "newer"), Ok(()));
    assert_eq!(store.write("c1", 5, "late"), Err(8));

    let report = check(&History::new(), &[&store], Options::default());
    report.assert_safe();
    assert_eq!((report.stats.writes, report.stats.rejected), (3, 3));
    let tokens: Vec<_> = store.writes().iter().map(|w| w.token.unwrap()).collect();
    assert_eq!(tokens, [5, 5, 8]);
}

#[test]
fn a_store_log_forged_to_have_accepted_a_stale_token_is_caught() {
    let store = FencedStore::new("ledger");
    store.write("c1", 5, "a").unwrap();
    store.write("c2", 8, "b").unwrap();
    let forged = Write {
        client: "c1".into(),
        token: Some(5),
        payload: "stale".into(),
        at: Instant::now(),
    };
    store.tamper(|state| {
        state.contents.push(forged.payload.clone());
        state.log.push(forged);
    });

    let report = check(&History::new(), &[&store], Options::default());
    let Violation::StaleAccepted(name, stale, after) = only(&report, ViolationKind::StaleAccepted) else {
        panic!()
    };
    assert_eq!((name.as_str(), stale.token, after.token), ("ledger", Some(5), Some(8)));
    assert_eq!(after.client, "c2");
}

#[test]
fn an_acknowledged_fenced_write_missing_from_the_final_state_is_caught() {
    let store = FencedStore::new("ledger");
    for (token, payload) in [(1, "a"), (2, "b"), (3, "c")] {
        store.write("c1", token, payload).unwrap();
    }
    store.tamper(|state| state.contents.remove(1));

    let report = check(&History::new(), &[&store], Options::default());
    let Violation::LostWrite(_, acknowledged, survived, suspects) = only(&report, ViolationKind::LostWrite) else {
        panic!()
    };
    assert_eq!((*acknowledged, *survived), (3, 2));
    assert_eq!(suspects.iter().map(|w| w.payload.as_str()).collect::<Vec<_>>(), ["b"]);
}

#[tokio::test]
async fn interleaved_read_modify_writes_on_an_unfenced_store_lose_an_update() {
    let (sequential, interleaved) = (UnfencedStore::new("sequential"), UnfencedStore::new("interleaved"));
    for client in ["c1", "c2"] {
        sequential.write(client, sequential.read() + 1);
    }
    interleaved.write("c0", interleaved.read() + 1);
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let tasks: Vec<_> = ["c1", "c2"]
        .map(|client| {
            let (store, barrier) = (interleaved.clone(), barrier.clone());
            tokio::spawn(async move {
                let value = store.read();
                barrier.wait().await; // both have read before either writes
                store.write(client, value + 1);
            })
        })
        .into();
    for task in tasks {
        task.await.unwrap();
    }

    let report = check(&History::new(), &[&sequential, &interleaved], Options::default());
    let Violation::LostWrite(store, acknowledged, survived, suspects) = only(&report, ViolationKind::LostWrite) else {
        panic!()
    };
    assert_eq!(
        (store.as_str(), *acknowledged, *survived, suspects.len()),
        ("interleaved", 3, 2, 1)
    );
    assert_eq!(report.stats.writes, 5);
}

#[test]
fn liveness_holds_when_a_grant_completes_within_the_deadline_after_healing() {
    let h = History::new();
    let value = grant(&h, "c1", "r", (0, 10), 1, 1000);
    release(&h, "c1", "r", &value, 20, Reply::Released);
    op(&h, "c2", "r", Kind::Acquire, (1000, 1100), Reply::Fail);
    grant(&h, "c2", "r", (1200, 1500), 2, 1000);

    let healed = h.at(ms(1000));
    check(&h, &[], Options::default().liveness("r", healed, ms(500))).assert_safe();
    let report = check(&h, &[], Options::default().liveness("r", healed, ms(499)));
    let Violation::Liveness(_, _, _, first_grant) = only(&report, ViolationKind::Liveness) else {
        panic!()
    };
    assert_eq!(*first_grant, Some(ms(1500)));
}

#[test]
fn liveness_fails_when_the_only_grants_came_before_healing() {
    let h = History::new();
    let value = grant(&h, "c1", "r", (0, 10), 1, 1000);
    release(&h, "c1", "r", &value, 20, Reply::Released);
    op(&h, "c2", "r", Kind::Acquire, (1000, 1100), Reply::Unknown);

    let report = check(&h, &[], Options::default().liveness("r", h.at(ms(1000)), ms(5000)));
    let Violation::Liveness(resource, _, _, first_grant) = only(&report, ViolationKind::Liveness) else {
        panic!()
    };
    assert_eq!((resource.as_str(), *first_grant), ("r", None));
    let message = report.violations[0].to_string();
    assert!(
        message.contains("faults healed at t+1.000s, no grant by t+6.000s; first grant after: none"),
        "{message}"
    );
}

#[test]
fn assert_safe_panics_listing_every_violation() {
    let h = History::new();
    grant(&h, "c1", "r", (0, 10), 7, 1000);
    grant(&h, "c2", "r", (5, 20), 7, 1000);
    let report = check_history(&h, 0);

    let panic = std::panic::catch_unwind(|| report.assert_safe()).expect_err("two violations");
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    assert!(message.contains("violations: Overlap 1, TokenDuplicate 1"), "{message}");
    assert!(message.contains("\n  - Overlap on r: c1 token 7"), "{message}");
    assert!(
        message.contains("\n  - TokenDuplicate on r: token 7 granted twice"),
        "{message}"
    );
}

/// An in-memory lock for the concurrency tests; `exclusive: false` lets everyone in (an unsafe control).
struct FakeLock {
    holders: Mutex<Vec<String>>,
    counter: AtomicU64,
    exclusive: bool,
}

impl FakeLock {
    fn new(exclusive: bool) -> FakeLock {
        FakeLock {
            holders: Mutex::default(),
            counter: AtomicU64::new(0),
            exclusive,
        }
    }

    fn acquire(&self, value: &str) -> Option<u64> {
        let mut holders = self.holders.lock().unwrap();
        if self.exclusive && !holders.is_empty() {
            return None;
        }
        holders.push(value.to_owned());
        Some(self.counter.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn release(&self, value: &str) {
        self.holders.lock().unwrap().retain(|v| v != value);
    }
}

/// `tasks` tasks each make `rounds` attempts: acquire; if granted, write to the store, wait for the
/// barrier (if any) and release. Returns the history and the store.
async fn run_clients(lock: FakeLock, tasks: usize, rounds: usize, barrier: Option<usize>) -> (History, FencedStore) {
    let (h, store, lock) = (History::new(), FencedStore::new("ledger"), Arc::new(lock));
    let barrier = Arc::new(tokio::sync::Barrier::new(barrier.unwrap_or(1)));
    let mut handles = Vec::new();
    for task in 0..tasks {
        let (h, store, lock, barrier) = (h.clone(), store.clone(), lock.clone(), barrier.clone());
        handles.push(tokio::spawn(async move {
            for round in 0..rounds {
                let (client, value) = (format!("c{task}"), format!("v{task}.{round}"));
                let id = h.invoke(&client, "r", Kind::Acquire);
                tokio::task::yield_now().await;
                let Some(token) = lock.acquire(&value) else {
                    h.complete(id, Reply::Fail);
                    tokio::time::sleep(ms(1)).await;
                    continue;
                };
                h.complete(
                    id,
                    Reply::Granted(Grant {
                        token,
                        validity: ms(10_000),
                        value: value.clone(),
                        shared: false,
                        ..Grant::default()
                    }),
                );
                let _ = store.write(&client, token, round);
                barrier.wait().await;
                tokio::time::sleep(ms(1)).await;
                let id = h.invoke(&client, "r", Kind::Release(value.clone()));
                lock.release(&value);
                h.complete(id, Reply::Released);
                tokio::time::sleep(ms(1)).await;
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    (h, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tokio_tasks_record_into_one_history_and_a_correct_lock_passes() {
    let lock = FakeLock::new(true);
    let (h, store) = run_clients(lock, 16, 25, None).await;

    let report = check(&h, &[&store], Options::default());
    report.assert_safe();
    let s = &report.stats;
    assert_eq!((s.ops, s.acquires), (h.ops().len(), 16 * 25), "{report}");
    assert_eq!(s.grants + s.failed, s.acquires, "{report}");
    assert_eq!((s.releases, s.writes, s.rejected), (s.grants, s.grants, 0), "{report}");
    let mut holders: Vec<String> = (h.ops().into_iter())
        .filter_map(|op| matches!(op.reply, Reply::Granted(_)).then_some(op.client))
        .collect();
    holders.dedup();
    assert!(holders.len() > 1, "the lock passed between tasks: {holders:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_lets_two_tasks_in_at_once_is_caught() {
    let lock = FakeLock::new(false);
    let (h, store) = run_clients(lock, 2, 1, Some(2)).await;

    let report = check(&h, &[&store], Options::default());
    assert_eq!(report.count(ViolationKind::Overlap), 1, "{report}");
    assert_eq!(
        report.violations.len(),
        1,
        "concurrent grants: no token-order violation: {report}"
    );
    assert_eq!(
        (report.stats.writes + report.stats.rejected, report.stats.grants),
        (2, 2),
        "{report}"
    );
}
