//! The checker's rules for the kinds of lock beyond the mutex
//! (docs/design.md#shared-locks), on synthetic histories: what each rule
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
