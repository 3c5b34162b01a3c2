//! Humans against bots on both games, bot against bot to the end, and a search cancelled when
//! its game ends. These check legality and the event stream, not playing strength (that is
//! tests/bot_play.rs).

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// Collects a room's record events until game_over; checks seq, alternation and legality.
async fn play_out(
    c: &mut Client,
    room: &str,
    mut seq: u64,
    mut taken: HashSet<(u64, u64)>,
    size: (u64, u64),
    human: Option<&str>,
) -> (Value, usize) {
    let mut thinking = 0;
    loop {
        let v = c.recv_skip(&["room_update"]).await;
        match v["type"].as_str().unwrap() {
            "bot_thinking" => {
                assert_eq!(v["room_id"], room);
                thinking += 1;
            }
            "move" => {
                seq += 1;
                assert_eq!(v["seq"], seq, "{v}");
                let expected_seat = if seq % 2 == 1 { "x" } else { "o" };
                assert_eq!(v["seat"], expected_seat);
                let cell = (v["x"].as_u64().unwrap(), v["y"].as_u64().unwrap());
                assert!(cell.0 < size.0 && cell.1 < size.1, "{v}");
                assert!(taken.insert(cell), "cell played twice: {v}");
                if v["turn"].is_null() {
                    continue;
                }
                if Some(v["turn"].as_str().unwrap()) == human {
                    // The human plays the first empty cell in reading order.
                    let free = (0..size.1)
                        .flat_map(|y| (0..size.0).map(move |x| (x, y)))
                        .find(|c| !taken.contains(c))
                        .unwrap();
                    c.send(json!({"type": "move", "room_id": room, "x": free.0, "y": free.1}))
                        .await;
                }
            }
            "game_over" => {
                seq += 1;
                assert_eq!(v["seq"], seq, "{v}");
                return (v, thinking);
            }
            other => panic!("unexpected {other}: {v}"),
        }
    }
}

#[tokio::test]
async fn human_vs_bot_caro_bot_answers_legally() {
    let server = start(config()).await;
    let (mut a, _) = server.hello("a").await;
    let (j, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    assert_eq!(j["room"]["status"], "playing");
    assert_eq!(j["room"]["players"]["o"], bot("quick"));
    a.send(json!({"type": "move", "room_id": room, "x": 4, "y": 4}))
        .await;
    let (over, thinking) = play_out(&mut a, &room, 0, HashSet::new(), (9, 9), Some("x")).await;
    assert!(thinking > 0, "bot_thinking was sent");
    assert!(["line", "board_full"].contains(&over["reason"].as_str().unwrap()));
    // Every bot move was a search, and each was timed.
    let searches = server.metric("bot_search_seconds_count").await;
    let bot_moves = over["seq"].as_u64().unwrap() / 2;
    assert!(
        searches >= bot_moves.max(1),
        "{searches} searches, {bot_moves} bot moves"
    );
    server.stop().await;
}

#[tokio::test]
async fn human_vs_bot_tictactoe_bot_moves_first() {
    let server = start(config()).await;
    let (mut a, _) = server.hello("a").await;
    let (j, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": {"bot": "strong"}, "o": "me"}),
    )
    .await;
    assert_eq!(j["you"], json!({"role": "player", "seat": "o"}));
    let (over, _) = play_out(&mut a, &room, 0, HashSet::new(), (3, 3), Some("o")).await;
    assert_eq!(over["room_id"], room);
    server.stop().await;
}

#[tokio::test]
async fn bot_vs_bot_to_the_end_with_the_creator_watching() {
    let server = start(config()).await;
    let (mut a, _) = server.hello("a").await;
    for (game, size) in [("tictactoe", 3), ("caro", 7)] {
        let mut msg = json!({"type": "create_room", "game": game,
            "x": {"bot": "quick"}, "o": {"bot": "quick"}});
        if game == "caro" {
            msg["width"] = json!(size);
        }
        let (j, room) = create(&mut a, msg).await;
        assert_eq!(j["you"], json!({"role": "spectator"}));
        let (over, _) = play_out(&mut a, &room, 0, HashSet::new(), (size, size), None).await;
        assert_ne!(over["reason"], "resign");
        // The finished room stays listed and watchable.
        let (_, body) = server.get("/api/rooms").await;
        assert!(body.contains(&room));
    }
    server.stop().await;
}

#[tokio::test]
async fn a_search_is_cancelled_when_its_game_ends() {
    // Bots take at least 400 ms a move here, so the resignation lands mid-search.
    let server = start(config_with("", "", "", "min_move_ms = 400")).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    a.send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    assert_eq!(a.event().await["seq"], 1);
    a.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(
        a.event().await,
        json!({"type": "game_over", "room_id": room, "seq": 2, "result": "o", "reason": "resign"})
    );
    // No bot move ever arrives.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(800);
    while let Ok(v) = tokio::time::timeout_at(deadline, a.recv()).await {
        assert_eq!(v["type"], "bot_thinking", "{v}");
    }
    server.stop().await;
}

/// The depths of the bot_thinking messages between two moves of a bot-against-bot Caro game,
/// per move.
async fn thinking_per_move(search: &str) -> Vec<Vec<u64>> {
    let server = start(config_with("", "", "", search)).await;
    let (mut a, _) = server.hello("a").await;
    create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9,
            "x": {"bot": "strong"}, "o": {"bot": "strong"}}),
    )
    .await;
    let mut depths = vec![vec![]];
    while depths.len() <= 6 {
        let v = a.recv_skip(&["room_update"]).await;
        match v["type"].as_str().unwrap() {
            "bot_thinking" => depths
                .last_mut()
                .unwrap()
                .push(v["depth"].as_u64().unwrap()),
            "move" => depths.push(vec![]),
            _ => break,
        }
    }
    depths.pop();
    server.stop().await;
    depths
}

/// `search.thinking_interval_ms` throttles progress: with a long interval a search reports its
/// first completed depth and then, held back until the search ends, its last (so at most two,
/// the second deeper); without one it reports every depth.
#[tokio::test]
async fn bot_thinking_is_throttled_per_search() {
    let throttled = thinking_per_move("thinking_interval_ms = 60000").await;
    assert!(
        throttled
            .iter()
            .all(|d| d.len() <= 2 && d.windows(2).all(|w| w[0] < w[1])),
        "{throttled:?}"
    );
    assert!(throttled.iter().any(|d| d.len() == 2), "{throttled:?}");
    let free = thinking_per_move("thinking_interval_ms = 0").await;
    assert!(free.iter().any(|d| d.len() > 2), "{free:?}");
}

/// Regression: a shallow level finishes every depth inside one thinking interval, so only its
/// first report (depth 1) went out and the analysis panel of `beginner`, `casual` and `club`
/// always read "Depth 1", with a line that was not the move's. The last finished depth is now
/// always reported, before the move.
#[tokio::test]
async fn a_shallow_level_reports_the_depth_its_move_came_from() {
    let server = start(config_with_bots(
        "thinking_interval_ms = 60000",
        r#"
[bots.shallow]
description = "Three plies"
games = ["caro"]
max_depth = 3
time_ms = 10000
"#,
    ))
    .await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "shallow"}}),
    )
    .await;
    for (x, y) in [(7, 7), (3, 11)] {
        a.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        assert_eq!(a.event().await["seat"], "x");
        let mut reports = vec![];
        let bot_move = loop {
            let v = a.recv_skip(&["room_update"]).await;
            match v["type"].as_str().unwrap() {
                "bot_thinking" => reports.push(v),
                "move" => break v,
                other => panic!("unexpected {other}: {v}"),
            }
        };
        let depths: Vec<_> = reports
            .iter()
            .map(|r| r["depth"].as_u64().unwrap())
            .collect();
        assert_eq!(depths, [1, 3], "{reports:?}");
        let last = reports.last().unwrap();
        assert_eq!(last["seat"], "o");
        assert!(last["nodes"].as_u64().unwrap() > 0, "{last}");
        // No blunder rate: the move is the first of the line reported.
        assert_eq!(
            last["pv"][0],
            json!([bot_move["x"], bot_move["y"]]),
            "{last}"
        );
    }
    server.stop().await;
}

/// Opens `n` 9x9 games of `level` against itself, one after the other, watched by `c`, and
/// returns the rooms whose first move has already been seen: a game moves as soon as it exists,
/// so its first move is either in its own `room_joined` snapshot or a `move` (`seq` 1) that can
/// come before the next game's `room_joined`.
async fn open_bot_games(c: &mut Client, n: usize, level: &str) -> HashSet<String> {
    let mut first_moves = HashSet::new();
    for _ in 0..n {
        c.send(json!({"type": "create_room", "game": "caro", "width": 9,
            "x": {"bot": level}, "o": {"bot": level}}))
            .await;
        let joined = loop {
            let v = c
                .recv_skip(&["bot_thinking", "room_update", "game_over"])
                .await;
            if v["type"] != "move" {
                break v;
            }
            if v["seq"] == 1 {
                first_moves.insert(v["room_id"].to_string());
            }
        };
        assert_eq!(joined["type"], "room_joined", "{joined}");
        if joined["room"]["moves"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
        {
            first_moves.insert(joined["room"]["room_id"].to_string());
        }
    }
    first_moves
}

/// `caro_bot_searches_peak` after three bot-against-bot games have finished twelve searches
/// between them, and, with `human`, a human's whole game against a bot played beside them (a
/// human's game does not wait for the bot games' slots, so only the server-wide bound holds it
/// back). The server keeps the high-water mark where it counts a search in and out, so a burst
/// between two scrapes of `/metrics` is not missed.
async fn peak_searches(max_concurrent: usize, human: bool) -> u64 {
    let server = start(config_with(
        "",
        "",
        "",
        &format!("max_concurrent = {max_concurrent}"),
    ))
    .await;
    let (mut a, _) = server.hello("a").await;
    open_bot_games(&mut a, 3, "strong").await;
    if human {
        let (mut h, _) = server.hello("h").await;
        let (_, room) = create(
            &mut h,
            json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": {"bot": "quick"}}),
        )
        .await;
        h.send(json!({"type": "move", "room_id": room, "x": 0, "y": 0}))
            .await;
        play_out(&mut h, &room, 0, HashSet::new(), (9, 9), Some("x")).await;
    }
    let mut moves = 0;
    while moves < 12 {
        let v = a.recv_skip(&["room_update", "bot_thinking"]).await;
        match v["type"].as_str().unwrap() {
            "move" => moves += 1,
            // A finished game leaves the others to make up the count.
            "game_over" => {}
            other => panic!("unexpected {other}: {v}"),
        }
    }
    let peak = server.metric("bot_searches_peak").await;
    server.stop().await;
    peak
}

/// `search.max_concurrent` bounds the searches running at once, server-wide: with one permit
/// three busy bot games and a human's game never search in parallel; with three they do.
#[tokio::test]
async fn the_search_semaphore_bounds_concurrent_searches() {
    assert_eq!(peak_searches(1, true).await, 1);
    assert!(peak_searches(3, false).await >= 2);
}

/// Games between bots hold at most `search.bot_vs_bot_slots` (by default all but one) of the
/// search slots, so however many of them run, a game with a human finds a slot at once.
///
/// "At once" is shown by the order of events on one socket, not by a clock: the bot games play a
/// level that thinks for eight seconds a move (after the instant first one), and the human's bot
/// thinks for 50 ms. A reply
/// that had to wait for a bot game's slot could only start once that game's search ended, so it
/// would arrive after that game's move; a reply that found a free slot arrives before any.
#[tokio::test]
async fn bot_games_leave_a_search_slot_to_games_with_a_human() {
    assert_eq!(peak_searches(2, false).await, 1);
    // One player runs every game here, so the per-player share of slots (tests/fair_bots.rs)
    // is lifted to the whole pool: this test is about the bot-vs-bot slots alone.
    let server = start(config_with_bots(
        "max_concurrent = 2
slots_per_player = 2
min_move_ms = 0",
        r#"
[bots.slow]
description = "Thinks for eight seconds a move"
games = ["caro"]
max_depth = 64
time_ms = 8000
"#,
    ))
    .await;
    // The human watches the bot games from the same connection, so their moves and the
    // human's replies are ordered on one socket.
    let (mut h, _) = server.hello("h").await;
    // The first move of a game is the centre, found without a search: let those pass first.
    let mut first_moves = open_bot_games(&mut h, 3, "slow").await;
    while first_moves.len() < 3 {
        let v = h.recv_skip(&["room_update", "bot_thinking"]).await;
        assert_eq!((&v["type"], &v["seq"]), (&json!("move"), &json!(1)), "{v}");
        first_moves.insert(v["room_id"].to_string());
    }
    // The bot games' searches report their progress on this socket meanwhile.
    h.send(json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": {"bot": "quick"}}))
        .await;
    let joined = h.recv_skip(&["room_update", "bot_thinking"]).await;
    assert_eq!(joined["type"], "room_joined", "{joined}");
    let room = joined["room"]["room_id"].as_str().unwrap().to_string();
    for (x, y) in [(0, 0), (8, 0), (0, 8)] {
        h.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let mut seats = Vec::new();
        while seats.len() < 2 {
            let v = h.recv_skip(&["room_update", "bot_thinking"]).await;
            assert_eq!(v["type"], "move", "{v}");
            assert_eq!(
                v["room_id"], room,
                "a bot game moved before the human's bot replied: {v}"
            );
            seats.push(v["seat"].clone());
        }
        assert_eq!(seats, ["x", "o"]);
    }
    // The bot games held their one slot all along: nothing else ever ran beside the human's.
    assert_eq!(server.metric("bot_searches_peak").await, 2);
    server.stop().await;
}

/// The nice value of a thread, from its /proc stat file (field 19 of stat(5)).
#[cfg(target_os = "linux")]
fn nice_of(task: &std::path::Path) -> Option<i64> {
    let stat = std::fs::read_to_string(task.join("stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(16)?.parse().ok()
}

/// The nice values of this process's threads named `name`.
#[cfg(target_os = "linux")]
fn nice_of_threads(name: &str) -> Vec<i64> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| nice_of(&t.path()))
        .collect()
}

/// Searches run on their own threads, `search.nice` steps nicer than the server, so players'
/// messages win the CPU from them (docs/performance.md, the bots scenario).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn searches_run_on_threads_of_lower_priority() {
    let server = start(config_with("", "", "", "nice = 7")).await;
    let (mut a, _) = server.hello("a").await;
    let base = nice_of(std::path::Path::new("/proc/thread-self")).unwrap();
    let target = (base + 7).min(19);
    a.send(json!({"type": "create_room", "game": "caro", "width": 15,
        "x": {"bot": "strong"}, "o": {"bot": "strong"}}))
        .await;
    // A thread is seen for an instant before it lowers its own priority, and the other tests of
    // this file run their servers' searches in this process too, at the default nice: wait for
    // one of ours at the configured priority (no other server here uses nice = 7).
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let seen = nice_of_threads("bot-search");
        if seen.contains(&target) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "search threads at {seen:?}, expected {target}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.stop().await;
}
