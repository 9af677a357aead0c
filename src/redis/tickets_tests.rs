use super::*;

#[test]
fn a_slot_is_on_one_lane_at_a_time() {
    let tickets = Tickets::new();
    assert!(tickets.try_take(5, 1));
    assert!(tickets.try_take(5, 1), "a second request on the same lane");
    assert!(!tickets.try_take(5, 2), "another lane while two are unanswered");
    assert!(tickets.try_take(6, 2), "another slot is free");
    tickets.give_back(5);
    assert!(!tickets.try_take(5, SLOT_LANE), "one is still unanswered");
    tickets.give_back(5);
    assert!(tickets.try_take(5, SLOT_LANE), "drained: any lane");
    assert!(!tickets.try_take(5, 1));
}

#[tokio::test]
async fn a_request_for_another_lane_waits_until_the_slot_drains() {
    let tickets = Arc::new(Tickets::new());
    let first = tickets.ticket(7, 1).await;
    let second = tickets.ticket(7, 1).await;
    let waiting = tokio::spawn({
        let tickets = Arc::clone(&tickets);
        async move { tickets.ticket(7, 2).await }
    });
    tokio::task::yield_now().await;
    drop(first);
    tokio::task::yield_now().await;
    assert!(
        !waiting.is_finished(),
        "moved to lane 2 with a request unanswered on lane 1"
    );
    drop(second);
    let moved = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await;
    assert!(moved.is_ok(), "the slot drained and the request still waits");
    assert!(!tickets.try_take(7, 1), "the slot is on lane 2 now");
}

#[tokio::test]
async fn a_request_that_stops_waiting_is_no_longer_counted() {
    let tickets = Arc::new(Tickets::new());
    let held = tickets.ticket(3, 1).await;
    let gave_up = tokio::time::timeout(std::time::Duration::from_millis(20), tickets.ticket(3, 2)).await;
    assert!(gave_up.is_err(), "took lane 2 with a request unanswered on lane 1");
    assert_eq!(
        tickets.waiting.load(Ordering::SeqCst),
        0,
        "the abandoned wait is still counted"
    );
    drop(held);
}
