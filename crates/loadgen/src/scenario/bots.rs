//! `bots`: how much human move latency suffers while every bot search slot is busy. The same
//! `rooms` traffic (human against human, at a set rate) runs twice: alone, then beside B games
//! of a human against the strongest bot level, where the human answers each bot move at once so
//! the searches never pause. The server's `/metrics` is sampled meanwhile to show that the slots
//! were in fact busy.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::rooms;
use crate::client;
use crate::stats::{Latency, Percentiles};
use crate::{script, wire, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// The human-vs-human traffic measured (give it a `rate`).
    pub rooms: rooms::Opts,
    /// Human-vs-bot games beside it.
    pub bot_games: usize,
    /// The bot level (the strongest one by default).
    pub level: String,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Always `server`: the baseline has no bots.
    pub target: String,
    /// Human-vs-bot games.
    pub bot_games: usize,
    /// Their level.
    pub level: String,
    /// The rooms traffic alone.
    pub without: rooms::Report,
    /// The same traffic with the bots busy.
    pub with: rooms::Report,
    /// with.ack.p99 / without.ack.p99.
    pub p99_ratio: f64,
    /// Mean of `caro_bot_searches_active` sampled during the second run (the slots busy).
    pub searches_active_mean: f64,
    /// Bot moves played during the second run.
    pub bot_moves: u64,
    /// The humans of the bot games: send to their own move coming back.
    pub bot_game_ack: Percentiles,
}

impl Report {
    /// The numbers compared.
    pub fn key_metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("p99_without_ms", self.without.ack.p99_ms),
            ("p99_with_ms", self.with.ack.p99_ms),
            ("p99_ratio", self.p99_ratio),
            ("searches_active_mean", self.searches_active_mean),
        ]
    }

    /// Lines for people.
    pub fn human(&self) -> String {
        format!(
            "bots [{}]: {} games vs {:?}, {:.2} searches busy on average, {} bot moves\n  without bots: ack {}\n  with bots:    ack {}\n  p99 with/without = {:.2}; humans of the bot games: ack {}",
            self.target,
            self.bot_games,
            self.level,
            self.searches_active_mean,
            self.bot_moves,
            self.without.ack,
            self.with.ack,
            self.p99_ratio,
            self.bot_game_ack,
        )
    }
}

/// Runs the rooms traffic without, then with, busy bots.
pub async fn run(target: &Target, opts: &Opts) -> anyhow::Result<Report> {
    let without = rooms::run(target, &opts.rooms).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let bot_moves = Arc::new(AtomicU64::new(0));
    let mut games = Vec::new();
    for i in 0..opts.bot_games {
        games.push(tokio::spawn(bot_game(
            target.addr,
            i,
            opts.rooms.board,
            opts.level.clone(),
            stop.clone(),
            bot_moves.clone(),
        )));
    }
    // Let the searches start before measuring.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let moves_before = bot_moves.load(Relaxed);
    let sampler_stop = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn(sample_searches(target.addr, sampler_stop.clone()));
    let with = rooms::run(target, &opts.rooms).await;
    sampler_stop.store(true, Relaxed);
    let bot_moves_during = bot_moves.load(Relaxed) - moves_before;
    stop.store(true, Relaxed);
    let mut bot_game_ack = Latency::default();
    for g in games {
        match g.await {
            Ok(Ok(l)) => bot_game_ack.merge(&l),
            Ok(Err(e)) => eprintln!("bots: bot game: {e:#}"),
            Err(e) => eprintln!("bots: bot game task: {e}"),
        }
    }
    let samples = sampler.await.unwrap_or_default();
    let with = with?;
    let searches_active_mean = if samples.is_empty() {
        f64::NAN
    } else {
        samples.iter().sum::<f64>() / samples.len() as f64
    };
    let p99_ratio = with.ack.p99_ms / without.ack.p99_ms;
    Ok(Report {
        target: target.name.clone(),
        bot_games: opts.bot_games,
        level: opts.level.clone(),
        without,
        with,
        p99_ratio,
        searches_active_mean,
        bot_moves: bot_moves_during,
        bot_game_ack: bot_game_ack.summary(),
    })
}

/// A human against a bot, game after game until `stop`: the human plays the first free cell of
/// the script the moment the bot has moved.
async fn bot_game(
    addr: SocketAddr,
    i: usize,
    board: u8,
    level: String,
    stop: Arc<AtomicBool>,
    bot_moves: Arc<AtomicU64>,
) -> anyhow::Result<Latency> {
    let mut ws = client::hello(addr, &format!("vsbot{i}")).await?;
    let cells = script::fill(board);
    let mut ack = Latency::default();
    let mut req = 0;
    while !stop.load(Relaxed) {
        req += 1;
        client::send(&mut ws, wire::create_bot_room(board, &level, req)).await?;
        let room = client::room_id(&client::expect(&mut ws, "room_joined").await?)?;
        let mut taken = vec![false; board as usize * board as usize];
        let mut seen = 0u64;
        let mut pending: Option<(u64, Instant)> = None;
        // X moves first; later, when a bot move says it is X's turn (not after the last move).
        let mut my_turn = true;
        'game: loop {
            if my_turn && pending.is_none() {
                my_turn = false;
                if stop.load(Relaxed) {
                    break 'game;
                }
                let Some(&(x, y)) = cells
                    .iter()
                    .find(|(x, y)| !taken[*y as usize * board as usize + *x as usize])
                else {
                    break 'game;
                };
                pending = Some((seen + 1, Instant::now()));
                client::send(&mut ws, wire::move_(&room, seen + 1, x, y)).await?;
            }
            let text =
                tokio::time::timeout(Duration::from_secs(60), client::next_text(&mut ws)).await;
            let Ok(Some(text)) = text else {
                anyhow::bail!("bot game {i}: no answer for a minute");
            };
            let now = Instant::now();
            let Some(m) = wire::read(&text) else { continue };
            match m.ty {
                "move" => {
                    seen = m.seq.unwrap_or(0);
                    if let (Some(x), Some(y)) = (m.x, m.y) {
                        taken[y as usize * board as usize + x as usize] = true;
                    }
                    match pending {
                        Some((s, sent)) if s == seen => {
                            ack.record(now - sent);
                            pending = None;
                        }
                        _ => {
                            bot_moves.fetch_add(1, Relaxed);
                            my_turn = m.turn == Some("x");
                        }
                    }
                }
                "game_over" => break 'game,
                "error" => anyhow::bail!("bot game {i}: {text}"),
                _ => {}
            }
        }
        client::send(&mut ws, wire::leave_room(&room)).await?;
    }
    client::close(ws).await;
    Ok(ack)
}

/// Samples `caro_bot_searches_active` from `/metrics` every 100 ms until `stop`.
async fn sample_searches(addr: SocketAddr, stop: Arc<AtomicBool>) -> Vec<f64> {
    let mut out = Vec::new();
    while !stop.load(Relaxed) {
        if let Some(v) = metric(addr, "caro_bot_searches_active").await {
            out.push(v);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    out
}

/// One value of the server's `/metrics`.
pub async fn metric(addr: SocketAddr, name: &str) -> Option<f64> {
    let get = async {
        let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: loadgen\r\nConnection: close\r\n\r\n")
            .await
            .ok()?;
        let mut body = String::new();
        s.read_to_string(&mut body).await.ok()?;
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
    };
    tokio::time::timeout(Duration::from_secs(2), get)
        .await
        .ok()?
}
