//! The checker's rules for the kinds of lock beyond the mutex
//! (docs/design.md#shared-locks, docs/design.md#semaphores), on synthetic histories: what each rule
//! allows passes, and each unsafe history is caught.

use crate::support;

use std::time::Duration;

use support::history::{Grant, History, Kind, Options, Reply, Report, ViolationKind, check};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A grant sent at `times.0` ms and answered at `times.1`, held for `hold`
/// ms from the send (then released); a reader when `shared`.
fn grant(h: &History, client: &str, (sent, answered): (u64, u64), token: u64, hold: u64, shared: bool) {
    let value = format!("{client}/{token}/{sent}");
    let id = h.invoke_at(client, "r", Kind::Acquire, h.at(ms(sent)));
    let reply = Reply::Granted(Grant {
        token,
        validity: ms(10_000),
        value: value.clone(),
        shared,
        ..Grant::default()
    });
    h.complete_at(id, reply, h.at(ms(answered)));
    let id = h.invoke_at(client, "r", Kind::Release(value), h.at(ms(sent + hold)));
    h.complete_at(id, Reply::Released, h.at(ms(sent + hold + 1)));
}

fn checked(h: &History) -> Report {
    check(h, &[], Options::default())
}

const READER: bool = true;
const WRITER: bool = false;

#[test]
fn readers_overlap_and_share_a_token_and_a_writer_comes_after_them_above_it() {
    let h = History::new();
    grant(&h, "w1", (0, 5), 100, 50, WRITER);
    grant(&h, "r1", (60, 65), 115, 100, READER);
    grant(&h, "r2", (70, 75), 115, 100, READER);
    // A later reader may carry a larger token than an earlier one.
    grant(&h, "r3", (80, 85), 131, 100, READER);
    grant(&h, "w2", (200, 205), 144, 50, WRITER);
    // A reader after a writer: at least its token.
    grant(&h, "r4", (300, 305), 159, 50, READER);
    let report = checked(&h);
    report.assert_safe();
    assert_eq!(report.stats.grants, 6, "{report}");
}

#[test]
fn a_writer_overlapping_a_reader_is_caught_whichever_came_first() {
    for (first, second) in [(READER, WRITER), (WRITER, READER)] {
        let h = History::new();
        grant(&h, "a", (0, 5), 100, 100, first);
        grant(&h, "b", (50, 55), 116, 100, second);
        let report = checked(&h);
        assert_eq!(report.count(ViolationKind::Overlap), 1, "{report}");
        assert!(format!("{report}").contains("(reader)"), "{report}");
    }
}

/// The control of readers advancing the counter without publishing it
/// (docs/design.md#shared-locks): a writer fenced at or below a read that
/// came before it.
#[test]
fn a_writer_not_above_an_earlier_reader_is_caught() {
    for token in [47, 32] {
        let h = History::new();
        grant(&h, "r1", (0, 5), 31, 10, READER);
        grant(&h, "r2", (20, 25), 47, 10, READER);
        grant(&h, "w", (40, 45), token, 10, WRITER);
        let report = checked(&h);
        assert_eq!(report.count(ViolationKind::TokenOrder), 1, "{token}: {report}");
        let message = format!("{report}");
        assert!(message.contains(&format!("yet {token} <= 47")), "{message}");
    }
}

#[test]
fn a_reader_below_an_earlier_writer_is_caught_and_a_duplicate_with_a_writer_too() {
    let h = History::new();
    grant(&h, "w", (0, 5), 160, 10, WRITER);
    grant(&h, "r", (20, 25), 159, 10, READER);
    let report = checked(&h);
    assert_eq!(report.count(ViolationKind::TokenOrder), 1, "{report}");
    assert!(format!("{report}").contains("yet 159 < 160"), "{report}");

    // A reader and a writer never share a token, even apart in time.
    let h = History::new();
    grant(&h, "r", (0, 5), 160, 10, READER);
    grant(&h, "w", (20, 25), 160, 10, WRITER);
    let report = checked(&h);
    assert_eq!(report.count(ViolationKind::TokenDuplicate), 1, "{report}");
}

/// A permit of a semaphore of `of`, on `slot`, held from `sent` for `hold` ms.
fn permit(h: &History, client: &str, (sent, of, slot): (u64, u32, u32), token: u64, hold: u64) {
    let value = format!("{client}/{slot}/{token}");
    let id = h.invoke_at(client, "s", Kind::Acquire, h.at(ms(sent)));
    let grant = Grant {
        token,
        validity: ms(10_000),
        value: value.clone(),
        permits: of,
        slot,
        ..Grant::default()
    };
    h.complete_at(id, Reply::Granted(grant), h.at(ms(sent + 5)));
    let id = h.invoke_at(client, "s", Kind::Release(value), h.at(ms(sent + hold)));
    h.complete_at(id, Reply::Released, h.at(ms(sent + hold + 1)));
}

#[test]
fn n_permits_at_once_pass_and_tokens_count_per_slot() {
    let h = History::new();
    permit(&h, "a", (0, 2, 0), 500, 100);
    // Another slot's tokens are its own: lower is fine.
    permit(&h, "b", (10, 2, 1), 40, 100);
    permit(&h, "c", (200, 2, 0), 501, 100);
    permit(&h, "d", (210, 2, 1), 41, 100);
    checked(&h).assert_safe();
}

/// The control of permits counted on each master: three of two at once.
#[test]
fn more_permits_at_once_than_the_semaphore_has_are_caught() {
    let h = History::new();
    for (i, client) in ["a", "b", "c"].into_iter().enumerate() {
        permit(&h, client, (10 * i as u64, 2, i as u32), 7, 100);
    }
    let report = checked(&h);
    assert_eq!(report.count(ViolationKind::TooManyPermits), 1, "{report}");
    assert!(format!("{report}").contains("3 of 2 permits held at once"), "{report}");
}

#[test]
fn two_holders_of_one_slot_are_caught_and_so_is_a_slot_token_going_down() {
    let h = History::new();
    permit(&h, "a", (0, 3, 1), 100, 100);
    permit(&h, "b", (50, 3, 1), 101, 100);
    assert_eq!(checked(&h).count(ViolationKind::Overlap), 1);
    let h = History::new();
    permit(&h, "a", (0, 3, 1), 100, 10);
    permit(&h, "b", (50, 3, 1), 99, 10);
    assert_eq!(checked(&h).count(ViolationKind::TokenOrder), 1);
}

/// A lock handed out again under a reentrancy key: the same value twice, sent at `sent` and `again`.
fn reentered(h: &History, (sent, again): (u64, u64), token: u64, releases: &[u64]) {
    let value = format!("reentrant/{token}");
    for (client, at) in [("a", sent), ("b", again)] {
        let id = h.invoke_at(client, "r", Kind::Acquire, h.at(ms(at)));
        let grant = Grant {
            token,
            validity: ms(10_000),
            value: value.clone(),
            ..Grant::default()
        };
        h.complete_at(id, Reply::Granted(grant), h.at(ms(at + 5)));
    }
    for at in releases {
        let id = h.invoke_at("a", "r", Kind::Release(value.clone()), h.at(ms(*at)));
        h.complete_at(id, Reply::Released, h.at(ms(at + 1)));
    }
}

#[test]
fn a_reentrant_lock_is_one_holder_until_its_last_release() {
    let h = History::new();
    reentered(&h, (0, 20), 100, &[50, 90]);
    grant(&h, "c", (100, 105), 116, 50, WRITER);
    checked(&h).assert_safe();
    // A holder that came after the first release but before the last overlaps it.
    let h = History::new();
    reentered(&h, (0, 20), 100, &[50, 90]);
    grant(&h, "c", (60, 65), 116, 50, WRITER);
    let report = checked(&h);
    assert_eq!(report.count(ViolationKind::Overlap), 2, "{report}");
}
