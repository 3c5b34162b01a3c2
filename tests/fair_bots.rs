//! Search slots are served to players in turn: one player's many bot games cannot keep a
//! bystander's bot waiting behind all of their searches (issue 16: one player's 30 games
//! against `master` raised another player's `beginner` reply from 0.3 s to 4.6-4.9 s, because
//! slots were first come, first served). docs/bots.md, "Search slots".
//!
//! The check is an order of events, not a time: with one slot, every search of the hog queued
//! before the bystander's would run before it under first come, first served; taking turns, at
//! most the one running when the bystander asks does. With two slots, one player holds only one
//! (`search.slots_per_player`), so the bystander waits for none of the hog's searches.

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

/// The hog opens `hog_games` games against a level thinking `hog_ms` a move (each asks for one
/// search at once), then the bystander plays `quick` once. Returns what was seen, in order,
/// once `hog_moves_wanted` of the hog's bot moves have arrived.
async fn hog_and_bystander(
    search: &str,
    hog_games: usize,
    hog_ms: u64,
    hog_moves_wanted: usize,
) -> Vec<Seen> {
    // A level that always thinks its full time.
    let slow = format!(
        "[bots.slow]\ndescription = \"slow\"\ngames = [\"caro\"]\nmax_depth = 64\ntime_ms = {hog_ms}\n"
    );
    let server = start(config_with_bots(search, &slow)).await;
    let (mut hog, _) = server.hello("hog").await;
    let (mut bystander, _) = server.hello("bystander").await;

    // The hog's games each ask for a search once its move is acknowledged.
    for _ in 0..hog_games {
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
        for _ in 0..hog_moves_wanted {
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
    server.stop().await;

    let mut seen = Vec::new();
    while let Some(s) = log.recv().await {
        seen.push(s);
    }
    seen
}

/// Hog moves seen between the bystander's request and its reply, and after the reply.
fn hog_moves_around_the_reply(seen: &[Seen]) -> (usize, usize) {
    let asked = seen
        .iter()
        .position(|s| *s == Seen::BystanderAsked)
        .unwrap();
    let answered = seen
        .iter()
        .position(|s| *s == Seen::BystanderAnswered)
        .unwrap();
    (answered - asked - 1, seen.len() - answered - 1)
}

#[tokio::test]
async fn a_bystanders_bot_is_served_before_a_hogs_queued_searches() {
    const HOG_GAMES: usize = 5;
    // One slot, every search of the hog holding it 500 ms.
    let seen = hog_and_bystander("max_concurrent = 1", HOG_GAMES, 500, HOG_GAMES).await;
    let (between, after) = hog_moves_around_the_reply(&seen);
    // One slot: only the hog's search running when the bystander asked may finish first
    // (first come, first served: all five did).
    assert!(between <= 1, "{seen:?}");
    // Not vacuous: the hog's other searches were queued then, and ran after.
    assert!(after >= HOG_GAMES - 2, "{seen:?}");
}

/// With two slots, one player's searches hold one (`search.slots_per_player`, all but one by
/// default): the bystander's bot takes the other at once, and waits for none of the hog's
/// searches, not even a running one.
#[tokio::test]
async fn one_players_bot_games_leave_a_slot_free() {
    // The hog's searches think 3 s each, the bystander's `quick` 50 ms at most.
    let seen = hog_and_bystander("max_concurrent = 2", 3, 3000, 1).await;
    let (between, after) = hog_moves_around_the_reply(&seen);
    assert_eq!((between, after), (0, 1), "{seen:?}");
}
