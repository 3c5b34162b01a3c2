//! Bot move overhead: how long the bot pool takes from a room's request to the search starting,
//! and what the engine's tables cost to allocate.
//!
//! The position has a five on the board for the side to move, so the engine reports its only
//! "iteration" (a `bot_thinking` event) right after its first look at the root, a few
//! microseconds after it starts: the time from `BotPool::start` to that event is the pool's own
//! cost (a task, a search permit, a thread or a pool thread, the engine's tables, a channel).
//! `min_move` is 0 and every permit is free. Run it with `cargo run --example bot_overhead [moves]`; the
//! engine is built with opt-level 3 even in dev builds (see Cargo.toml).

use std::sync::Arc;
use std::time::{Duration, Instant};

use caro_arena::bot::{BotEvent, BotPool};
use caro_arena::config::{BotConfig, BotEngine, SearchConfig};
use caro_arena::metrics::Metrics;
use caro_engine::bot::{Bot, Level, Style};
use caro_engine::search::Engine;
use caro_engine::{Board, GameKind, Move, Rules};
use indexmap::IndexMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p90(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() * 9 / 10]
}

#[tokio::main]
async fn main() {
    let moves: usize = std::env::args()
        .nth(1)
        .map_or(200, |s| s.parse().expect("moves"));
    let level = Level {
        style: Style::Full,
        max_depth: 64,
        time: Duration::from_millis(1000),
        blunder: 0.0,
        search: caro_engine::bot::level_params(),
    };
    let mut levels = IndexMap::new();
    levels.insert(
        "master".to_string(),
        BotConfig {
            name: "master".into(),
            description: String::new(),
            games: vec![GameKind::Caro],
            engine: BotEngine::Builtin(level),
            rating: None,
        },
    );
    let search = SearchConfig {
        max_concurrent: 2,
        thinking_interval: Duration::from_millis(250),
        min_move: Duration::ZERO,
        nice: 10,
        bot_vs_bot_slots: 1,
        slots_per_player: 1,
        idle_threads: 1,
    };
    let tracker = TaskTracker::new();
    let pool = BotPool::new(
        levels,
        search,
        Arc::new(Metrics::default()),
        tracker.clone(),
        CancellationToken::new(),
    );
    let seat = pool.seat("master").expect("the level");
    let m = |v: &[(u8, u8)]| v.iter().map(|&(a, b)| Move::new(a, b)).collect::<Vec<_>>();
    let board = Board::set_up(
        Rules::caro_default(),
        &m(&[(3, 7), (4, 7), (5, 7), (6, 7)]),
        &m(&[(3, 9), (5, 9), (9, 2), (12, 12)]),
    )
    .expect("a legal position");

    let (tx, mut rx) = mpsc::channel(16);
    let mut took = Vec::with_capacity(moves);
    let mut to_answer = Vec::with_capacity(moves);
    for gen in 0..moves as u64 + 5 {
        let t = Instant::now();
        let _handle = pool.start(
            &seat,
            board.clone(),
            true,
            "bench".into(),
            gen,
            tx.clone(),
            None,
        );
        let mut started = None;
        loop {
            match rx.recv().await.expect("an answer") {
                BotEvent::Thinking { gen: g, .. } if g == gen => started = Some(t.elapsed()),
                BotEvent::Done { gen: g, best } if g == gen => {
                    assert!(best.is_some());
                    break;
                }
                _ => {}
            }
        }
        // The first few warm the pool (threads, the pattern table, the engines).
        if gen >= 5 {
            took.push(started.expect("a thinking event"));
            to_answer.push(t.elapsed());
        }
    }
    println!(
        "request to search started: median {:?}, p90 {:?} over {moves} moves",
        median(&mut took),
        p90(&mut took)
    );
    println!(
        "request to answer: median {:?}, p90 {:?}",
        median(&mut to_answer),
        p90(&mut to_answer)
    );

    let mut alloc = Vec::new();
    let mut reuse = Vec::new();
    let mut engine = Engine::new(16);
    let stop = std::sync::atomic::AtomicBool::new(false);
    for seed in 0..50 {
        let t = Instant::now();
        let mut bot = Bot::new(level, seed);
        alloc.push(t.elapsed());
        bot.choose(&board, &stop, &mut |_| {});
        drop(bot);
        let t = Instant::now();
        let mut bot = Bot::with_engine(level, seed, engine);
        bot.choose(&board, &stop, &mut |_| {});
        engine = bot.into_engine();
        reuse.push(t.elapsed());
    }
    println!(
        "Bot::new (16 MiB table, threat table, move cache): median {:?}, p90 {:?}",
        median(&mut alloc),
        p90(&mut alloc)
    );
    println!(
        "a pooled engine's search of the same position (the search itself included): median {:?}",
        median(&mut reuse)
    );
    tracker.close();
}
