//! `abuse`: what hostile clients cost everyone else, against a server with the shipped limits
//! (`crates/loadgen/abuse.toml`). Four phases, each bounded in count and time:
//!
//! 1. **slow readers**: N clients that never read their socket ask for `list_rooms` under the
//!    rate limit while R rooms are open: the server's RSS before and during, per slow client,
//!    and the close code each one reads at the end (1013 expected, past
//!    `limits.send_queue_bytes`).
//! 2. **floods**: F clients sending messages past the rate limit and one sending WebSocket
//!    pings, each reconnecting once closed, while P scripted pairs play at a set rate (the
//!    `rooms` scenario): the players' ack latency without and during the floods, and the close
//!    codes the flooders read (1008 expected).
//! 3. **session flood**: one client address opening sessions (`hello` without a token) as fast
//!    as it can: accepted against refused (HTTP 429 from `limits.upgrades_per_ip_per_sec`), and
//!    the players' ack latency meanwhile.
//! 4. **bot hog**: one player asks for H games against the strongest level (the per-player cap
//!    `limits.bot_games_per_player` refuses the rest with `too_many_rooms_for_player`) and
//!    answers every bot move at once; a bystander's bot reply time against a weak level, without
//!    and with the hog.
//!
//! The per-address caps (`limits.max_connections_per_ip`, `limits.upgrades_per_ip_per_sec`)
//! would stop the scenario's own many clients, so every abusive connection comes from a source
//! address of its own in 127/8 ([`Sources`]), except the session flood, whose one address is
//! the point. The scripted players connect from 127.0.0.1. The report counts the addresses used.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use futures::SinkExt;
use serde::Serialize;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::bots::metric;
use super::rooms;
use crate::client::{self, Ws};
use crate::stats::{Latency, Percentiles};
use crate::{script, sys, wire, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Phase 1: clients that never read.
    pub slow_clients: usize,
    /// Phase 1: rooms opened (by scripted creators) before the slow clients start.
    pub rooms: usize,
    /// Phase 1: length of the creators' names in characters (the longer, the larger each
    /// `list_rooms` reply; the server's `limits.max_name_chars` is the most it takes).
    pub creator_name_chars: usize,
    /// Phase 1: `list_rooms` per second per slow client (under `limits.rate_per_sec`).
    pub slow_rate: f64,
    /// Phase 1: how long the slow clients keep asking.
    pub slow_time: Duration,
    /// Phase 2: clients flooding messages (plus one flooding WebSocket pings).
    pub flooders: usize,
    /// Phases 2 and 3: scripted games played beside the abuse.
    pub pairs: usize,
    /// Phases 2 and 3: their moves per second, over all games.
    pub pair_rate: f64,
    /// Phases 2 and 3: measured time of each players' run.
    pub phase_time: Duration,
    /// Phase 4: games the hog asks for.
    pub hog_games: usize,
    /// Phase 4: the hog's bot level.
    pub hog_level: String,
    /// Phase 4: the bystander's bot level.
    pub bystander_level: String,
    /// Phase 4: bot replies the bystander measures, each run.
    pub bystander_moves: usize,
    /// Phase 4: longest time of each bystander run.
    pub bystander_time: Duration,
}

/// Source addresses 127.0.1.1, 127.0.1.2, ... handed out one per connection (wrapping after
/// 62,500): each looks like a client of its own to the server's per-address caps.
#[derive(Default)]
pub struct Sources(AtomicU32);

impl Sources {
    /// The next address.
    pub fn next(&self) -> IpAddr {
        let n = self.0.fetch_add(1, Relaxed) % 62_500;
        IpAddr::V4(Ipv4Addr::new(
            127,
            0,
            1 + (n / 250) as u8,
            1 + (n % 250) as u8,
        ))
    }

    /// Addresses handed out so far.
    pub fn used(&self) -> u32 {
        self.0.load(Relaxed)
    }
}

/// Close codes as read by clients: `"1013"`, `"1008"`, ..., `"none"` (no close frame: a reset,
/// or still open when the wait ended).
pub type Codes = BTreeMap<String, u64>;

fn count_code(codes: &mut Codes, code: Option<u16>) {
    let key = code.map_or("none".into(), |c| c.to_string());
    *codes.entry(key).or_default() += 1;
}

/// Phase 1.
#[derive(Clone, Debug, Serialize)]
pub struct SlowReport {
    /// Slow clients that said hello.
    pub clients: usize,
    /// Rooms open while they asked.
    pub rooms_open: usize,
    /// `list_rooms` sent, all clients.
    pub requests: u64,
    /// Server RSS before they connected (bytes).
    pub rss_before: Option<u64>,
    /// Seconds they asked (less than asked for once all were dropped).
    pub asked_secs: f64,
    /// Highest server RSS while they asked (sampled every 100 ms).
    pub rss_during_max: Option<u64>,
    /// (during - before) / clients.
    pub bytes_per_slow_client: Option<f64>,
    /// Growth of the server's `caro_slow_clients_dropped_total`.
    pub dropped: Option<f64>,
    /// The close codes the slow clients read when they finally read.
    pub close_codes: Codes,
}

/// Phase 2.
#[derive(Clone, Debug, Serialize)]
pub struct FloodReport {
    /// Message flooders (and one ping flooder besides).
    pub flooders: usize,
    /// Flood connections opened (each reconnects once closed).
    pub connections: u64,
    /// Messages and ping frames sent by all of them.
    pub sent: u64,
    /// The close codes the message flooders read.
    pub close_codes: Codes,
    /// The close codes the ping flooder read.
    pub ping_close_codes: Codes,
    /// The players' ack latency alone.
    pub ack_without: Percentiles,
    /// The players' ack latency during the floods.
    pub ack_during: Percentiles,
    /// `error` frames and failed clients among the players, during.
    pub player_errors: u64,
}

/// Phase 3.
#[derive(Clone, Debug, Serialize)]
pub struct SessionReport {
    /// Upgrades tried from the one address.
    pub attempts: u64,
    /// Sessions opened (`welcome` read).
    pub accepted: u64,
    /// Upgrades refused with HTTP 429.
    pub refused_429: u64,
    /// Other failures.
    pub other_errors: u64,
    /// The players' ack latency during the flood.
    pub ack_during: Percentiles,
    /// `error` frames and failed clients among the players.
    pub player_errors: u64,
}

/// A bystander's bot reply times: from its move sent to the bot's move read.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Replies {
    /// Replies measured.
    pub count: u64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
}

impl From<&Latency> for Replies {
    fn from(l: &Latency) -> Self {
        Replies {
            count: l.len(),
            p50_ms: l.quantile_ms(0.5),
            p90_ms: l.quantile_ms(0.9),
        }
    }
}

/// Phase 4.
#[derive(Clone, Debug, Serialize)]
pub struct HogReport {
    /// The hog's level.
    pub hog_level: String,
    /// Games it asked for.
    pub asked: usize,
    /// Games it got.
    pub accepted: usize,
    /// Refused with `too_many_rooms_for_player`.
    pub refused_cap: usize,
    /// Refused with another code.
    pub refused_other: usize,
    /// Bot moves in the hog's games while the bystander measured.
    pub hog_bot_moves: u64,
    /// The bystander's level.
    pub bystander_level: String,
    /// Its bot reply time alone.
    pub without: Replies,
    /// Its bot reply time beside the hog.
    pub with: Replies,
    /// with.p50 / without.p50.
    pub p50_ratio: f64,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Always `server`.
    pub target: String,
    /// Source addresses in 127/8 the abusive clients used (see the module docs).
    pub source_addresses: u32,
    /// Phase 1.
    pub slow: SlowReport,
    /// Phase 2.
    pub floods: FloodReport,
    /// Phase 3.
    pub sessions: SessionReport,
    /// Phase 4.
    pub hog: HogReport,
}

impl Report {
    /// The numbers compared between runs.
    pub fn key_metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            (
                "bytes_per_slow_client",
                self.slow.bytes_per_slow_client.unwrap_or(f64::NAN),
            ),
            ("flood_ack_p99_without_ms", self.floods.ack_without.p99_ms),
            ("flood_ack_p99_during_ms", self.floods.ack_during.p99_ms),
            ("session_flood_ack_p99_ms", self.sessions.ack_during.p99_ms),
            ("sessions_accepted", self.sessions.accepted as f64),
            ("sessions_refused_429", self.sessions.refused_429 as f64),
            ("bystander_p50_without_ms", self.hog.without.p50_ms),
            ("bystander_p50_with_ms", self.hog.with.p50_ms),
        ]
    }

    /// Lines for people.
    pub fn human(&self) -> String {
        let mib =
            |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0));
        let s = &self.slow;
        let f = &self.floods;
        let q = &self.sessions;
        let h = &self.hog;
        format!(
            "abuse [{}]: {} source addresses in 127/8\n  slow readers: {} clients, {} rooms open, {} list_rooms in {:.1}s; RSS {} -> {} max; {} per slow client; dropped {}; close codes {:?}\n  floods: {} flooders + 1 pinger, {} connections, {} sent; close codes {:?}, pinger {:?}; players' ack without {}\n                                                                                      during  {} ({} errors)\n  session flood: {} upgrades from one address: {} accepted, {} refused 429, {} other; players' ack during {} ({} errors)\n  bot hog: {} games vs {:?} asked, {} accepted, {} refused too_many_rooms_for_player, {} other; {} hog bot moves; bystander vs {:?}: without p50={:.0}ms p90={:.0}ms (n={}), with p50={:.0}ms p90={:.0}ms (n={}), p50 ratio {:.2}",
            self.target,
            self.source_addresses,
            s.clients,
            s.rooms_open,
            s.requests,
            s.asked_secs,
            mib(s.rss_before),
            mib(s.rss_during_max),
            s.bytes_per_slow_client.map_or("?".into(), |b| format!("{:.0} KiB", b / 1024.0)),
            s.dropped.map_or("?".into(), |d| format!("{d}")),
            s.close_codes,
            f.flooders,
            f.connections,
            f.sent,
            f.close_codes,
            f.ping_close_codes,
            f.ack_without,
            f.ack_during,
            f.player_errors,
            q.attempts,
            q.accepted,
            q.refused_429,
            q.other_errors,
            q.ack_during,
            q.player_errors,
            h.asked,
            h.hog_level,
            h.accepted,
            h.refused_cap,
            h.refused_other,
            h.hog_bot_moves,
            h.bystander_level,
            h.without.p50_ms,
            h.without.p90_ms,
            h.without.count,
            h.with.p50_ms,
            h.with.p90_ms,
            h.with.count,
            h.p50_ratio,
        )
    }
}

/// Runs the four phases against `target`.
pub async fn run(target: &Target, opts: &Opts) -> anyhow::Result<Report> {
    let sources = Arc::new(Sources::default());
    let slow = slow_readers(target, opts, &sources)
        .await
        .context("slow readers")?;
    let floods = floods(target, opts, &sources).await.context("floods")?;
    let sessions = session_flood(target, opts, &sources)
        .await
        .context("session flood")?;
    let hog = bot_hog(target, opts, &sources).await.context("bot hog")?;
    Ok(Report {
        target: target.name.clone(),
        source_addresses: sources.used(),
        slow,
        floods,
        sessions,
        hog,
    })
}

/// Sends `create_room` frame `frame` and reads until the room is joined (`Ok(Ok(id))`) or
/// refused (`Ok(Err(code))`).
async fn create(ws: &mut Ws, frame: String) -> anyhow::Result<Result<String, String>> {
    client::send(ws, frame).await?;
    let wait = async {
        loop {
            let Some(text) = client::next_text(ws).await else {
                bail!("connection ended while creating a room");
            };
            let Some(m) = wire::read(&text) else { continue };
            match m.ty {
                "room_joined" => return Ok(Ok(client::room_id(&text)?)),
                "error" => return Ok(Err(m.code.unwrap_or("?").to_string())),
                _ => {}
            }
        }
    };
    tokio::time::timeout(client::STEP, wait)
        .await
        .map_err(|_| anyhow!("no answer to create_room"))?
}

/// Connects from a fresh source address and says hello.
async fn hello_from(
    addr: SocketAddr,
    from: IpAddr,
    recv_buffer: Option<u32>,
    name: &str,
) -> anyhow::Result<Ws> {
    let mut ws = client::connect_from(addr, from, recv_buffer).await?;
    client::send(&mut ws, wire::hello(name)).await?;
    client::expect(&mut ws, "welcome").await?;
    Ok(ws)
}

/// Phase 1.
async fn slow_readers(
    target: &Target,
    opts: &Opts,
    sources: &Sources,
) -> anyhow::Result<SlowReport> {
    // Creators open waiting rooms until each meets its per-player cap.
    let mut creators = Vec::new();
    let mut open = 0;
    let mut refused_in_a_row = 0;
    let mut req = 0;
    while open < opts.rooms && refused_in_a_row < 3 {
        let mut name = format!("creator{}-", creators.len());
        while name.len() < opts.creator_name_chars {
            name.push('c');
        }
        let mut ws = hello_from(target.addr, sources.next(), None, &name).await?;
        let mut made = 0;
        while open < opts.rooms {
            req += 1;
            match create(&mut ws, wire::create_room(15, req)).await? {
                Ok(_) => {
                    open += 1;
                    made += 1;
                }
                Err(code) if code == "too_many_rooms_for_player" => break,
                Err(code) => bail!("create_room refused: {code}"),
            }
        }
        refused_in_a_row = if made == 0 { refused_in_a_row + 1 } else { 0 };
        creators.push(ws);
    }
    // Let the lobby settle before the memory is read.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = target.pid.and_then(sys::rss_bytes);
    let dropped_before = metric(target.addr, "caro_slow_clients_dropped_total").await;
    let sent = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for i in 0..opts.slow_clients {
        // 4 KiB of receive window: what the server sends piles up in the server.
        let ws = hello_from(target.addr, sources.next(), Some(4096), &format!("slow{i}")).await?;
        clients.push(ws);
    }
    // A dropped client must stop sending and read within the server's close wait (2 s):
    // sending on to a socket the server has closed makes it answer with a reset, which throws
    // away the close frame still in this side's kernel buffer. So everyone stops asking once
    // the server has dropped them all (its `caro_slow_clients_dropped_total`), or at the end.
    let until = Instant::now() + opts.slow_time;
    let every = Duration::from_secs_f64(1.0 / opts.slow_rate.max(0.01));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for mut ws in clients.drain(..) {
        let (sent, stop) = (sent.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            let mut id = 0;
            while Instant::now() < until && !stop.load(Relaxed) {
                tick.tick().await;
                id += 1;
                // A send that blocks (the server stopped reading) or fails ends the asking.
                match tokio::time::timeout(every * 4, client::send(&mut ws, wire::list_rooms(id)))
                    .await
                {
                    Ok(Ok(())) => sent.fetch_add(1, Relaxed),
                    _ => break,
                };
            }
            // Now read: what the kernel still holds, then the close frame if there is one.
            client::close_code(&mut ws, Duration::from_secs(10)).await
        }));
    }
    let mut rss_max = rss_before;
    while Instant::now() < until {
        if let Some(r) = target.pid.and_then(sys::rss_bytes) {
            rss_max = Some(rss_max.map_or(r, |m| m.max(r)));
        }
        let dropped = metric(target.addr, "caro_slow_clients_dropped_total").await;
        if let (Some(a), Some(b)) = (dropped, dropped_before) {
            if a - b >= opts.slow_clients as f64 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Relaxed);
    let asked_secs = opts.slow_time.as_secs_f64()
        - until
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
    let mut close_codes = Codes::new();
    for t in tasks {
        count_code(&mut close_codes, t.await.context("slow client task")?);
    }
    let dropped_after = metric(target.addr, "caro_slow_clients_dropped_total").await;
    for ws in creators {
        client::close(ws).await;
    }
    let n = opts.slow_clients;
    Ok(SlowReport {
        clients: n,
        rooms_open: open,
        requests: sent.load(Relaxed),
        rss_before,
        rss_during_max: rss_max,
        asked_secs,
        bytes_per_slow_client: match (rss_before, rss_max) {
            (Some(b), Some(a)) if n > 0 => Some((a as f64 - b as f64) / n as f64),
            _ => None,
        },
        dropped: dropped_after.zip(dropped_before).map(|(a, b)| a - b),
        close_codes,
    })
}

/// The scripted players of phases 2 and 3: `rooms` at a set rate, from 127.0.0.1.
fn players(opts: &Opts) -> rooms::Opts {
    rooms::Opts {
        rooms: opts.pairs,
        spectators: 0,
        duration: opts.phase_time,
        warmup: Duration::from_secs(1),
        rate: opts.pair_rate,
        board: 15,
        concurrency: 4,
        pairing: rooms::Pairing::Same,
    }
}

/// Most connections one flooder opens in a phase, whatever the time.
const MAX_FLOOD_CONNECTIONS: u64 = 2_000;
/// Frames one flood connection sends before it reads its close.
const FLOOD_BURST: u64 = 1_000;

/// One flooder until `stop`: connect from a fresh address, send a burst far past the rate limit
/// (protocol pings, or WebSocket ping frames), read the close code, again.
async fn flooder(
    addr: SocketAddr,
    sources: Arc<Sources>,
    pings: bool,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
) -> Codes {
    let mut codes = Codes::new();
    let mut n = 0;
    while !stop.load(Relaxed) && n < MAX_FLOOD_CONNECTIONS {
        n += 1;
        let Ok(mut ws) = hello_from(addr, sources.next(), None, "flood").await else {
            count_code(&mut codes, None);
            continue;
        };
        connections.fetch_add(1, Relaxed);
        for i in 0..FLOOD_BURST {
            let frame = if pings {
                Message::Ping(vec![7u8; 100].into())
            } else {
                Message::Text(wire::ping(i).into())
            };
            if ws.send(frame).await.is_err() {
                break;
            }
            sent.fetch_add(1, Relaxed);
        }
        count_code(
            &mut codes,
            client::close_code(&mut ws, Duration::from_secs(5)).await,
        );
    }
    codes
}

/// Phase 2.
async fn floods(
    target: &Target,
    opts: &Opts,
    sources: &Arc<Sources>,
) -> anyhow::Result<FloodReport> {
    let without = rooms::run(target, &players(opts)).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let connections = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for i in 0..=opts.flooders {
        tasks.push(tokio::spawn(flooder(
            target.addr,
            sources.clone(),
            i == opts.flooders,
            stop.clone(),
            sent.clone(),
            connections.clone(),
        )));
    }
    let during = rooms::run(target, &players(opts)).await;
    stop.store(true, Relaxed);
    let mut close_codes = Codes::new();
    let mut ping_close_codes = Codes::new();
    for (i, t) in tasks.into_iter().enumerate() {
        let codes = t.await.context("flooder task")?;
        let into = if i == opts.flooders {
            &mut ping_close_codes
        } else {
            &mut close_codes
        };
        for (k, v) in codes {
            *into.entry(k).or_default() += v;
        }
    }
    let during = during?;
    Ok(FloodReport {
        flooders: opts.flooders,
        connections: connections.load(Relaxed),
        sent: sent.load(Relaxed),
        close_codes,
        ping_close_codes,
        ack_without: without.ack,
        ack_during: during.ack,
        player_errors: during.errors,
    })
}

/// Phase 3.
async fn session_flood(
    target: &Target,
    opts: &Opts,
    sources: &Sources,
) -> anyhow::Result<SessionReport> {
    let from = sources.next();
    let stop = Arc::new(AtomicBool::new(false));
    let addr = target.addr;
    let flood = tokio::spawn({
        let stop = stop.clone();
        async move {
            let (mut attempts, mut accepted, mut refused, mut other) = (0u64, 0u64, 0u64, 0u64);
            while !stop.load(Relaxed) && attempts < 200_000 {
                attempts += 1;
                match hello_from(addr, from, None, "visitor").await {
                    Ok(ws) => {
                        accepted += 1;
                        client::close(ws).await;
                    }
                    Err(e) if client::refused_status(&e) == Some(429) => refused += 1,
                    Err(e) => {
                        if other == 0 {
                            eprintln!("abuse: session flood: {e:#}");
                        }
                        other += 1;
                    }
                }
            }
            (attempts, accepted, refused, other)
        }
    });
    let during = rooms::run(target, &players(opts)).await;
    stop.store(true, Relaxed);
    let (attempts, accepted, refused_429, other_errors) =
        flood.await.context("session flood task")?;
    let during = during?;
    Ok(SessionReport {
        attempts,
        accepted,
        refused_429,
        other_errors,
        ack_during: during.ack,
        player_errors: during.errors,
    })
}

/// Board side of the bot games.
const BOT_BOARD: u8 = 15;

/// The first cell of the script not yet taken.
fn free_cell(cells: &[(u8, u8)], taken: &[bool]) -> Option<(u8, u8)> {
    cells
        .iter()
        .copied()
        .find(|&(x, y)| !taken[y as usize * BOT_BOARD as usize + x as usize])
}

/// A bystander's game(s) against `level`: up to `moves` bot replies or `within`, whichever
/// comes first; each from its move sent to the bot's move read.
async fn bystander(
    addr: SocketAddr,
    from: IpAddr,
    level: &str,
    moves: usize,
    within: Duration,
) -> anyhow::Result<Latency> {
    let mut ws = hello_from(addr, from, None, "bystander").await?;
    let cells = script::fill(BOT_BOARD);
    let mut replies = Latency::default();
    let until = Instant::now() + within;
    let mut req = 0;
    'games: while (replies.len() as usize) < moves && Instant::now() < until {
        req += 1;
        let room = match create(&mut ws, wire::create_bot_room(BOT_BOARD, level, req)).await? {
            Ok(r) => r,
            Err(code) => bail!("bystander's game refused: {code}"),
        };
        let mut taken = vec![false; BOT_BOARD as usize * BOT_BOARD as usize];
        let mut seq = 0u64;
        while let Some((x, y)) = free_cell(&cells, &taken) {
            let sent = Instant::now();
            client::send(&mut ws, wire::move_(&room, seq + 1, x, y)).await?;
            // Our move comes back, then the bot's.
            let mut bot_moved = false;
            while !bot_moved {
                let text = tokio::time::timeout_at(until, client::next_text(&mut ws)).await;
                let Ok(Some(text)) = text else { break 'games };
                let Some(m) = wire::read(&text) else { continue };
                match m.ty {
                    "move" => {
                        seq = m.seq.unwrap_or(seq);
                        if let (Some(x), Some(y)) = (m.x, m.y) {
                            taken[y as usize * BOT_BOARD as usize + x as usize] = true;
                        }
                        if m.turn == Some("x") {
                            replies.record(sent.elapsed());
                            bot_moved = true;
                        }
                    }
                    "game_over" => {
                        client::send(&mut ws, wire::leave_room(&room)).await?;
                        continue 'games;
                    }
                    "error" => bail!("bystander: {text}"),
                    _ => {}
                }
            }
            if replies.len() as usize >= moves {
                break;
            }
        }
        client::send(&mut ws, wire::leave_room(&room)).await?;
    }
    client::close(ws).await;
    Ok(replies)
}

/// The hog's games after they were opened: answer every bot move at once, until `stop`.
async fn hog_play(
    mut ws: Ws,
    rooms: Vec<String>,
    stop: Arc<AtomicBool>,
    bot_moves: Arc<AtomicU64>,
) -> anyhow::Result<()> {
    let cells = script::fill(BOT_BOARD);
    let mut boards: HashMap<String, (Vec<bool>, u64)> = rooms
        .iter()
        .map(|r| {
            (
                r.clone(),
                (vec![false; BOT_BOARD as usize * BOT_BOARD as usize], 0),
            )
        })
        .collect();
    // X moves first in every game.
    for r in &rooms {
        let (x, y) = cells[0];
        client::send(&mut ws, wire::move_(r, 1, x, y)).await?;
    }
    while !stop.load(Relaxed) {
        let text =
            tokio::time::timeout(Duration::from_millis(200), client::next_text(&mut ws)).await;
        let text = match text {
            Ok(Some(t)) => t,
            Ok(None) => bail!("the hog's connection ended"),
            Err(_) => continue,
        };
        let Some(m) = wire::read(&text) else { continue };
        let Some(room) = m.room_id else { continue };
        let Some((taken, seq)) = boards.get_mut(room) else {
            continue;
        };
        match m.ty {
            "move" => {
                *seq = m.seq.unwrap_or(*seq);
                if let (Some(x), Some(y)) = (m.x, m.y) {
                    taken[y as usize * BOT_BOARD as usize + x as usize] = true;
                }
                if m.turn == Some("x") {
                    bot_moves.fetch_add(1, Relaxed);
                    if let Some((x, y)) = free_cell(&cells, taken) {
                        let frame = wire::move_(room, *seq + 1, x, y);
                        client::send(&mut ws, frame).await?;
                    }
                }
            }
            "game_over" => {
                boards.remove(room);
            }
            _ => {}
        }
    }
    for r in &rooms {
        let _ = client::send(&mut ws, wire::leave_room(r)).await;
    }
    client::close(ws).await;
    Ok(())
}

/// Time between the hog's `create_room`s (8 a second).
const HOG_PACE: Duration = Duration::from_millis(125);

/// Phase 4.
async fn bot_hog(target: &Target, opts: &Opts, sources: &Sources) -> anyhow::Result<HogReport> {
    let addr = target.addr;
    let without = bystander(
        addr,
        sources.next(),
        &opts.bystander_level,
        opts.bystander_moves,
        opts.bystander_time,
    )
    .await?;
    let mut hog = hello_from(addr, sources.next(), None, "hog").await?;
    let (mut rooms, mut refused_cap, mut refused_other) = (Vec::new(), 0, 0);
    for i in 0..opts.hog_games {
        // Under the shipped rate limit (10/s, bursts of 30): a burst of 30 creates would leave
        // no tokens for the hog's first moves, which the server would refuse, and its bots
        // would never be asked to search.
        tokio::time::sleep(HOG_PACE).await;
        let frame = wire::create_bot_room(BOT_BOARD, &opts.hog_level, i as u64 + 1);
        match create(&mut hog, frame).await? {
            Ok(r) => rooms.push(r),
            Err(code) if code == "too_many_rooms_for_player" => refused_cap += 1,
            Err(code) => {
                if refused_other == 0 {
                    eprintln!("abuse: the hog's create_room refused: {code}");
                }
                refused_other += 1;
            }
        }
    }
    let accepted = rooms.len();
    let stop = Arc::new(AtomicBool::new(false));
    let bot_moves = Arc::new(AtomicU64::new(0));
    let play = tokio::spawn(hog_play(hog, rooms, stop.clone(), bot_moves.clone()));
    // Let the hog's searches start.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = bot_moves.load(Relaxed);
    let with = bystander(
        addr,
        sources.next(),
        &opts.bystander_level,
        opts.bystander_moves,
        opts.bystander_time,
    )
    .await;
    let hog_bot_moves = bot_moves.load(Relaxed) - before;
    stop.store(true, Relaxed);
    if let Err(e) = play.await.context("hog task")? {
        eprintln!("abuse: hog: {e:#}");
    }
    let with = with?;
    let (without, with) = (Replies::from(&without), Replies::from(&with));
    Ok(HogReport {
        hog_level: opts.hog_level.clone(),
        asked: opts.hog_games,
        accepted,
        refused_cap,
        refused_other,
        hog_bot_moves,
        bystander_level: opts.bystander_level.clone(),
        p50_ratio: with.p50_ms / without.p50_ms,
        without,
        with,
    })
}
