use super::*;

const TTL: Duration = Duration::from_secs(1);

#[test]
fn interest_is_told_of_a_resources_first_waiter_and_of_its_last() {
    let waiters = Arc::new(Waiters::new(10, 100));
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = told.clone();
    waiters.on_interest(Box::new(move |name, on| {
        seen.lock().unwrap().push((name.to_owned(), on))
    }));
    let a1 = waiters.join("a", &Who::default()).unwrap();
    let a2 = waiters.join("a", &Who::default()).unwrap();
    let b = waiters.join("b", &Who::default()).unwrap();
    drop(a1);
    assert_eq!(*told.lock().unwrap(), [("a".into(), true), ("b".into(), true)]);
    drop(a2);
    drop(b);
    let a3 = waiters.join("a", &Who::default()).unwrap();
    drop(a3);
    let expected: Vec<(String, bool)> = [
        ("a", true),
        ("b", true),
        ("a", false),
        ("b", false),
        ("a", true),
        ("a", false),
    ]
    .map(|(n, on)| (n.to_owned(), on))
    .to_vec();
    assert_eq!(*told.lock().unwrap(), expected);
}

#[tokio::test]
async fn waiters_are_served_first_in_first_out() {
    let waiters = Arc::new(Waiters::new(10, 100));
    let first = waiters.join("r", &Who::default()).unwrap();
    let second = waiters.join("r", &Who::default()).unwrap();
    let third = waiters.join("r", &Who::default()).unwrap();
    first.until_head().await;
    assert!(!second.is_head() && !third.is_head());
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (name, slot) in [("third", third), ("second", second)] {
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            slot.until_head().await;
            order.lock().unwrap().push(name);
            drop(slot);
        }));
    }
    tokio::task::yield_now().await;
    drop(first);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec!["second", "third"]);
    assert_eq!(waiters.waiting(), 0);
    assert!(!waiters.has_waiters("r"), "an empty queue was left behind");
}

#[tokio::test]
async fn limits_per_resource_and_in_total_are_resource_exhausted() {
    let waiters = Arc::new(Waiters::new(2, 3));
    let _a = waiters.join("r", &Who::default()).unwrap();
    let _b = waiters.join("r", &Who::default()).unwrap();
    let full = waiters.join("r", &Who::default()).err().unwrap();
    assert!(full.to_string().contains("max_waiters_per_resource"), "{full}");
    let _c = waiters.join("s", &Who::default()).unwrap();
    let all = waiters.join("t", &Who::default()).err().unwrap();
    assert!(all.to_string().contains("max_waiters"), "{all}");
    assert!(matches!(all, Error::LimitReached { .. }), "{all:?}");
}

#[tokio::test]
async fn the_next_head_learns_whether_the_one_before_left_holding_the_lock() {
    let waiters = Arc::new(Waiters::new(10, 100));
    let first = waiters.join("r", &Who::default()).unwrap();
    let second = waiters.join("r", &Who::default()).unwrap();
    let third = waiters.join("r", &Who::default()).unwrap();
    assert!(
        !first.offer(TTL.into(), String::new()).1,
        "nobody held it before the first head"
    );
    first.leave_holding();
    second.until_head().await;
    assert!(second.offer(TTL.into(), String::new()).1);
    // The hint is read once, and a head that left empty-handed gives none.
    assert!(!second.offer(TTL.into(), String::new()).1);
    drop(second);
    third.until_head().await;
    assert!(!third.offer(TTL.into(), String::new()).1);
}

#[tokio::test(start_paused = true)]
async fn the_release_that_ends_a_streak_makes_the_queue_step_aside_for_the_window() {
    let window = Duration::from_millis(50);
    let waiters = Arc::new(Waiters::new(10, 100).with_handoffs(4, window));
    let head = waiters.join("r", &Who::default()).unwrap();
    let (_lease, _) = head.offer(TTL.into(), String::new());
    // Within the streak the head is handed the lock; nobody steps aside.
    assert!(waiters.take_offer("r", 3).is_some());
    assert_eq!(head.yielding(), None);
    let (_lease, _) = head.offer(TTL.into(), String::new());
    let ended = Instant::now();
    assert!(waiters.take_offer("r", 4).is_none(), "the fifth release is published");
    assert_eq!(head.yielding(), Some(ended + window));
    // The release round took 30 ms: the window counts from its end.
    tokio::time::advance(Duration::from_millis(30)).await;
    waiters.step_aside("r", 3);
    assert_eq!(head.yielding(), Some(ended + window), "no streak ended with 3");
    waiters.step_aside("r", 4);
    let through = Instant::now();
    assert_eq!(head.yielding(), Some(through + window));
    tokio::time::advance(window).await;
    assert_eq!(head.yielding(), None, "the window is over");
    // With hand-offs off every release is published, and none yields.
    let off = Arc::new(Waiters::new(10, 100).with_handoffs(0, window));
    let head = off.join("r", &Who::default()).unwrap();
    let (_lease, _) = head.offer(TTL.into(), String::new());
    assert!(off.take_offer("r", 0).is_none());
    off.step_aside("r", 0);
    assert_eq!(head.yielding(), None);
}

#[tokio::test]
async fn a_published_release_wakes_the_head_even_if_it_came_between_waits() {
    let waiters = Arc::new(Waiters::new(10, 100));
    let slot = waiters.join("r", &Who::default()).unwrap();
    waiters.released("r");
    // The permit was stored: the next wait returns at once.
    tokio::time::timeout(std::time::Duration::from_secs(1), slot.released().notified())
        .await
        .expect("the wake-up was lost");
    waiters.released("other");
}
