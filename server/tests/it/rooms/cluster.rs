//! A room on a real three-master Redis Cluster: every key of the room shares one hash tag,
//! so its record, its event stream (read with `XREAD BLOCK`), the sale's lease and who bought
//! all live on one node, and a sale behaves as it does on a single Redis.

use oversold_protocol::{OutcomeResult, ServerMessage};
use serde_json::json;

use super::*;
use crate::common::{TestCluster, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_room_runs_its_sales_on_a_cluster_with_every_key_on_one_node() {
    let cluster = TestCluster::start();
    let server = TestServer::start(cluster.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut phone = server.client().await;
    join(&mut phone, &room.code, "phone").await;

    let mut oversold = Vec::new();
    for (n, strategy) in ["naive", "lua"].into_iter().enumerate() {
        let config = json!({"strategy": strategy, "stock": 10, "bots": 200, "duration_ms": 1500});
        presenter.send_json(open_sale(&room, config)).await;
        wait_opened(&mut phone).await;
        // The phone's click goes through the stream to the sale and comes back to it alone.
        let request_id = format!("tap-{n}");
        phone
            .send_json(json!({"type": "buy", "room": room.code, "request_id": request_id}))
            .await;
        let mine = wait_result(&mut phone).await;
        assert_eq!(mine.request_id, request_id);
        assert_ne!(mine.result, OutcomeResult::Error, "{mine:?}");

        let seen = until_closed(&mut presenter, 30).await;
        let Some(ServerMessage::SaleClosed(closed)) = seen.last() else {
            unreachable!()
        };
        let summary = closed.summary.as_ref().expect("a summary");
        assert_eq!(summary.buyers, 201, "200 bots and the phone");
        oversold.push(summary.oversold_units);
    }
    assert!(
        oversold[0] > 0,
        "naive oversells on a cluster too: {oversold:?}"
    );
    assert_eq!(oversold[1], 0, "lua never does");

    // Every key the room left behind is on the node that serves its hash tag.
    let tag = format!("{{room-{}}}", room.code);
    let keys: Vec<String> = cluster
        .run_keys()
        .await
        .into_iter()
        .filter(|k| k.contains(&tag))
        .collect();
    assert!(keys.len() >= 2, "the room's record and stream: {keys:?}");
    let home = cluster.node_serving(&keys[0]).await;
    for k in &keys {
        assert_eq!(
            cluster.node_serving(k).await,
            home,
            "{k} left the room's node"
        );
    }
}
