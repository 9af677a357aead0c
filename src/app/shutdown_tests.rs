//! Ordered shutdown (docs/design.md#layers): the grace period runs from the
//! start of the stop, background tasks stop last.

use super::*;

#[tokio::test(start_paused = true)]
async fn the_grace_period_runs_from_the_start_of_the_stop_and_background_tasks_stop_last() {
    let shutdown = std::sync::Arc::new(Shutdown::new(Duration::from_secs(5)));
    let background = tokio::spawn(shutdown.background_stopped());
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    shutdown.begin();
    assert_eq!(shutdown.deadline(), start + Duration::from_secs(6));
    shutdown.sessions_released();
    shutdown.grace_over().await;
    assert_eq!(Instant::now(), start + Duration::from_secs(6));
    assert!(
        !background.is_finished(),
        "background tasks stopped before the last stage"
    );
    shutdown.stop_background();
    background.await.unwrap();
}
