//! Redis Cluster (docs/design.md#layers): seed lists as fred's node
//! parameters, calls by slot all on their way at once and answered in order.

use super::*;

#[test]
fn a_list_of_seeds_becomes_freds_node_parameters() {
    assert_eq!(fred_url("redis://a:1").unwrap(), "redis://a:1");
    assert_eq!(fred_url("redis-cluster://a:1").unwrap(), "redis-cluster://a:1");
    assert_eq!(
        fred_url("redis-cluster://u:p@a:1,b:2,c:3").unwrap(),
        "redis-cluster://u:p@a:1?node=b:2&node=c:3"
    );
    assert_eq!(
        fred_url("rediss-cluster://a:1,b:2?x=1").unwrap(),
        "rediss-cluster://a:1?node=b:2&x=1"
    );
    assert!(
        fred_url("redis-cluster://a:1,,b:2")
            .unwrap_err()
            .to_string()
            .contains("empty host")
    );
    assert!(is_cluster_url("rediss-cluster://a:1") && !is_cluster_url("redis://a:1"));
}

/// An error message reaches logs: it never carries the password.
#[test]
fn an_empty_seed_is_named_without_the_password() {
    let said = fred_url("redis-cluster://lock:s3cret@a:1,,b:2")
        .unwrap_err()
        .to_string();
    assert!(!said.contains("s3cret"), "{said}");
    assert!(
        said.starts_with("redis-cluster://lock:***@a:1,,b:2: an empty host"),
        "{said}"
    );
    let without_user = fred_url("redis-cluster://a:1,,b:2").unwrap_err().to_string();
    assert!(without_user.starts_with("redis-cluster://a:1,,b:2:"), "{without_user}");
}

/// Reads and extensions go to every slot at once: three calls that
/// each wait for the other two all finish (in turn, the first would
/// wait for ever: a round would wait out `node_timeout`, and listing a
/// page of 300 locks over 300 slots missed locks so).
#[tokio::test]
async fn calls_by_slot_at_once_are_all_on_their_way_together() {
    let keys: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| buckets::key("p", &format!("lock:{n}")))
        .collect();
    let slots: std::collections::HashSet<u16> = keys.iter().map(|k| buckets::slot(k)).collect();
    assert_eq!(slots.len(), 3, "the test needs three slots");
    let items: Vec<&str> = keys.iter().map(String::as_str).collect();
    let barrier = tokio::sync::Barrier::new(3);
    let meet = |group: Vec<&str>| {
        let (barrier, group): (_, Vec<String>) = (&barrier, group.into_iter().map(str::to_owned).collect());
        async move {
            barrier.wait().await;
            Ok::<_, NodeError>(group)
        }
    };
    let at_once = by_slot(&items, true, |k| k, meet);
    let answers = tokio::time::timeout(std::time::Duration::from_secs(5), at_once).await;
    assert_eq!(answers.expect("the calls did not go at once").unwrap(), keys);
}

#[tokio::test]
async fn calls_by_slot_answer_in_the_items_order() {
    let keys: Vec<String> = ["a", "b", "a", "c", "b"]
        .iter()
        .map(|n| buckets::key("p", &format!("lock:{n}")))
        .collect();
    let items: Vec<&str> = keys.iter().map(String::as_str).collect();
    let groups = std::sync::Mutex::new(Vec::new());
    let echo = |group: Vec<_>| {
        let group: Vec<&str> = group;
        groups
            .lock()
            .unwrap()
            .push(group.iter().map(|k| buckets::slot(k)).collect::<Vec<u16>>());
        async move { Ok(group.into_iter().map(str::to_owned).collect()) }
    };
    let answers = by_slot(&items, true, |k| k, echo).await.unwrap();
    assert_eq!(answers, keys);
    let seen = std::mem::take(&mut *groups.lock().unwrap());
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen.iter().all(|g| g.windows(2).all(|w| w[0] == w[1])),
        "a call crossed slots: {seen:?}"
    );
    // Standalone: one call for all.
    assert_eq!(by_slot(&items, false, |k| k, echo).await.unwrap(), keys);
    assert_eq!(groups.lock().unwrap().len(), 1);
}
