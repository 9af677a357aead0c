//! Who holds a lock (docs/design.md#who-holds-it): tag and record read back,
//! the majority holder, its token never below the lease's.

use super::*;

fn view(value: &str, ttl_ms: u64, record: Option<&str>) -> Option<KeyView> {
    Some(KeyView {
        value: Some(value.into()),
        ttl: Some(Duration::from_millis(ttl_ms)),
        fence: None,
        holder: record.map(str::to_owned),
        readers: 0,
        permits: None,
    })
}

#[test]
fn the_tag_and_the_record_read_back() {
    let record = format!("42\n1700000000000\n{}", tag("pod-a/1f", "t1", "job 7"));
    let r = parse(&record).unwrap();
    assert_eq!(
        (r.counter, r.since_ms, r.daemon, r.tenant, r.owner),
        (42, 1_700_000_000_000, "pod-a/1f", "t1", "job 7")
    );
    assert!(parse("x\n1\na\nb\nc").is_none());
    assert!(parse("1\n2\na\nb").is_none());
}

#[test]
fn the_holder_is_the_majority_one_with_the_quorum_th_longest_ttl() {
    let views = vec![
        view("v", 9_000, Some("10\n500\nd\nt\nalice")),
        view("w", 9_500, Some("11\n400\nd2\nt\nmallory")),
        None,
        view("v", 7_000, Some("12\n450\nd\nt\nalice")),
        view("v", 8_000, Some("9\n600\nd\nt\nalice")),
    ];
    let holder = agreed(&views).unwrap();
    assert_eq!(holder.owner, "alice");
    assert_eq!(holder.daemon, "d");
    assert_eq!(holder.since_ms, 450);
    // Counter 12, granted by node 3.
    assert_eq!(holder.fencing_token, 12 * 16 + 3);
    // Held by three until 7 s from now: the third longest.
    assert_eq!(holder.ttl, Duration::from_millis(7_000));
}

/// Nodes 0 and 3 both recorded counter 12; the lease may have been
/// minted before node 0 answered (12 × 16 + 3): Inspect never says less.
#[test]
fn the_holder_token_is_never_below_the_lease_token() {
    let views = vec![
        view("v", 9_000, Some("12\n500\nd\nt\nalice")),
        view("v", 9_000, Some("11\n500\nd\nt\nalice")),
        None,
        view("v", 9_000, Some("12\n500\nd\nt\nalice")),
        view("v", 9_000, Some("10\n500\nd\nt\nalice")),
    ];
    assert_eq!(agreed(&views).unwrap().fencing_token, 12 * 16 + 3);
}

#[test]
fn no_majority_no_holder() {
    let views = vec![view("v", 1, None), view("v", 1, None), view("w", 1, None), None, None];
    assert_eq!(agreed(&views), None);
    let views = vec![view("v", 1, None), view("v", 1, None), view("v", 1, None), None, None];
    assert_eq!(
        agreed(&views).unwrap().owner,
        "",
        "a majority without records is still held"
    );
}
