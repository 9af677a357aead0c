//! The election routes over HTTP (docs/http.md#routes): a leader elected
//! over gRPC read, proclaimed and resigned over HTTP by its term, given as
//! the exact decimal string gRPC's uint64 is.

use std::time::Duration;

use redlockd_client::proto::campaign_request::Request as Ask;
use redlockd_client::proto::election_client::ElectionClient;
use redlockd_client::proto::{CampaignEvent, CampaignRequest, CampaignStart};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::support::http::Client;
use crate::support::{Cluster, Daemon, secs};

#[tokio::test]
async fn a_leader_is_read_proclaimed_and_resigned_over_http_by_its_exact_term() {
    let cluster = Cluster::start(5);
    let daemon = Daemon::start(&cluster).await;
    daemon.until_usable(5).await;
    let mut http = Client::connect(daemon.addr).await;
    let nobody = http.get("/v1/elections/jobs/sched").await;
    assert_eq!(nobody.status, 200, "{}", String::from_utf8_lossy(&nobody.body));
    assert_eq!(nobody.json()["elected"], false);

    let mut grpc = ElectionClient::new(daemon.channel().await);
    let (tx, requests) = mpsc::channel(4);
    tx.send(CampaignRequest {
        request: Some(Ask::Start(CampaignStart {
            election: "jobs/sched".into(),
            candidate: "a".into(),
            value: b"10.0.0.1".to_vec(),
            ttl: secs(5.0),
            ..CampaignStart::default()
        })),
    })
    .await
    .unwrap();
    let mut events = grpc.campaign(ReceiverStream::new(requests)).await.unwrap().into_inner();
    let elected = tokio::time::timeout(Duration::from_secs(20), events.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(elected.event(), CampaignEvent::Elected);
    let term = elected.term.to_string();

    let leader = http.get("/v1/elections/jobs/sched").await.json();
    assert_eq!(leader["elected"], true);
    assert_eq!(leader["candidate"], "a");
    assert_eq!(leader["term"], term.as_str());
    // bytes as base64: "10.0.0.1".
    assert_eq!(leader["value"], "MTAuMC4wLjE=");
    let participants = http.get("/v1/elections/jobs/sched:participants").await;
    assert_eq!(participants.status, 200);
    assert!(participants.json()["candidates"].is_array());

    // The term as a JSON number is refused: a JavaScript sender has rounded it.
    let number = http
        .post(
            "/v1/elections/jobs/sched:proclaim",
            &format!(r#"{{"term":{term},"value":"MTAuMC4wLjI="}}"#),
        )
        .await;
    assert_eq!(number.status, 400);
    assert!(
        number.message().starts_with("term: a 64-bit integer"),
        "{}",
        number.message()
    );
    // A stale term: FAILED_PRECONDITION, 400, as on gRPC.
    let stale = http
        .post(
            "/v1/elections/jobs/sched:resign",
            &format!(r#"{{"term":"{}"}}"#, elected.term - 1),
        )
        .await;
    assert_eq!(stale.status, 400);
    assert_eq!(stale.json()["code"], 9);

    let proclaimed = http
        .post(
            "/v1/elections/jobs/sched:proclaim",
            &format!(r#"{{"term":"{term}","value":"MTAuMC4wLjI="}}"#),
        )
        .await;
    assert_eq!(proclaimed.status, 200, "{}", String::from_utf8_lossy(&proclaimed.body));
    assert_eq!(proclaimed.json(), serde_json::json!({}));
    // Leader reads the new value (base64 of "10.0.0.2").
    let leader = http.get("/v1/elections/jobs/sched").await.json();
    assert_eq!(
        (leader["term"].as_str(), leader["value"].as_str()),
        (Some(term.as_str()), Some("MTAuMC4wLjI="))
    );

    let resigned = http
        .post("/v1/elections/jobs/sched:resign", &format!(r#"{{"term":"{term}"}}"#))
        .await;
    assert_eq!(resigned.status, 200, "{}", String::from_utf8_lossy(&resigned.body));
    // Its stream finds out (after any EXTENDED), and no one leads.
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.message())
            .await
            .unwrap()
            .unwrap()
            .expect("RESIGNED before the stream ends");
        match event.event() {
            CampaignEvent::Extended => {}
            ended => {
                assert!(
                    matches!(ended, CampaignEvent::Resigned | CampaignEvent::Lost),
                    "{event:?}"
                );
                break;
            }
        }
    }
    assert_eq!(http.get("/v1/elections/jobs/sched").await.json()["elected"], false);
    drop((tx, events));
    daemon.stop().await;
}
