//! Search slots are served to players in turn: one player's many bot games cannot keep a
//! bystander's bot waiting behind all of their searches (issue 16: one player's 30 games
//! against `master` raised another player's `beginner` reply from 0.3 s to 4.6-4.9 s, because
//! slots were first come, first served). docs/bots.md, "Search slots".
//!
//! The check is an order of events, not a time: with one slot, every search of the hog queued
//! before the bystander's would run before it under first come, first served; taking turns, at
//! most the one running when the bystander asks does.

mod common;

use common::*;
use serde_json::json;
use tokio::sync::mpsc;

/// What the test saw, in the order it saw it.
#[derive(Debug, PartialEq)]
enum Seen {
    HogBotMove,
    BystanderAsked,
    BystanderAnswered,
}

#[tokio::test]
async fn a_bystanders_bot_is_served_before_a_hogs_queued_searches() {
    const HOG_GAMES: usize = 5;
    // A level that always thinks its full time: every search holds the one slot for 500 ms.
    let slow = "[bots.slow]\ndescription = \"slow\"\ngames = [\"caro\"]\nmax_depth = 64\n\
                time_ms = 500\n";
    let server = start(config_with_bots("max_concurrent = 1", slow)).await;
    let (mut hog, _) = server.hello("hog").await;
    let (mut bystander, _) = server.hello("bystander").await;

    // The hog's games each ask for a search once its move is acknowledged: one runs, the
    // others queue.
    for _ in 0..HOG_GAMES {
        let (_, room) = create(
            &mut hog,
            json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "slow"}}),
        )
        .await;
        hog.send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
            .await;
        let ack = hog.event().await;
        assert_eq!(
            (ack["type"].as_str(), ack["seat"].as_str()),
            (Some("move"), Some("x"))
        );
    }
    let (log_tx, mut log) = mpsc::unbounded_channel();
    let hog_log = log_tx.clone();
    let hog_task = tokio::spawn(async move {
        for _ in 0..HOG_GAMES {
            let v = hog.event().await;
            assert_eq!(
                (v["type"].as_str(), v["seat"].as_str()),
                (Some("move"), Some("o")),
                "{v}"
            );
            hog_log.send(Seen::HogBotMove).unwrap();
        }
        hog
    });

    let (_, room) = create(
        &mut bystander,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    bystander
        .send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    let ack = bystander.event().await;
    assert_eq!(ack["seat"], "x", "{ack}");
    log_tx.send(Seen::BystanderAsked).unwrap();
    let reply = bystander.event().await;
    assert_eq!(
        (reply["type"].as_str(), reply["seat"].as_str()),
        (Some("move"), Some("o")),
        "{reply}"
    );
    log_tx.send(Seen::BystanderAnswered).unwrap();
    drop(log_tx);
    let _hog = hog_task.await.unwrap();

    let mut seen = Vec::new();
    while let Some(s) = log.recv().await {
        seen.push(s);
    }
    let asked = seen
        .iter()
        .position(|s| *s == Seen::BystanderAsked)
        .unwrap();
    let answered = seen
        .iter()
        .position(|s| *s == Seen::BystanderAnswered)
        .unwrap();
    let hog_between = answered - asked - 1;
    let hog_after = seen.len() - answered - 1;
    // One slot: only the hog's search running when the bystander asked may finish first.
    assert!(hog_between <= 1, "{seen:?}");
    // Not vacuous: the hog's other searches were queued then, and ran after.
    assert!(hog_after >= HOG_GAMES - 2, "{seen:?}");
    server.stop().await;
}
