//! `rooms`: R games between scripted human players, each watched by K spectators, for a set
//! time; moves per second, frames delivered per second, and the movers' acknowledgement latency.
//!
//! Each room slot is a creator (X), an opponent (O) and K spectators, one task per connection.
//! X creates a room and publishes its id; the others join and tell X; X moves first. A player
//! moves as soon as the previous move reaches it (`rate` 0), or on a schedule of `rate` moves per
//! second shared by all games. When a game has played the whole script (a full board, no line),
//! everyone leaves and X opens the next room. Counting happens only inside the window that starts
//! after `warmup`; the acknowledgement of move k is the mover receiving its own move k back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::Instant;

use crate::client::{self, Ws};
use crate::stats::{Latency, Percentiles};
use crate::{script, wire, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Concurrent games.
    pub rooms: usize,
    /// Spectators per game.
    pub spectators: usize,
    /// Measured time.
    pub duration: Duration,
    /// Unmeasured time first (rooms fill, caches warm).
    pub warmup: Duration,
    /// Moves per second over all games; 0 plays each move as soon as the previous one arrives.
    pub rate: f64,
    /// Board side.
    pub board: u8,
    /// Handshakes in flight at once.
    pub concurrency: usize,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `server` or `baseline`.
    pub target: String,
    /// Games.
    pub rooms: usize,
    /// Spectators per game.
    pub spectators: usize,
    /// Moves per second asked for (0: as fast as acknowledged).
    pub rate: f64,
    /// Measured seconds.
    pub secs: f64,
    /// Moves acknowledged in the window.
    pub moves: u64,
    /// moves / secs.
    pub moves_per_sec: f64,
    /// `move` frames received by all clients in the window, per second (the compared number).
    pub move_frames_per_sec: f64,
    /// Every frame received, per second (the server also sends room_update, game_over, ...).
    pub frames_per_sec: f64,
    /// Games started (including the first of each room).
    pub games: u64,
    /// `error` frames and failed clients.
    pub errors: u64,
    /// Mover's send to its own move coming back.
    pub ack: Percentiles,
    /// CPU seconds the target process used in the window (with its pid known).
    pub target_cpu_secs: Option<f64>,
    /// Target CPU per `move` frame delivered, microseconds: the cost of the work itself,
    /// steadier than the rates when other processes share the cores.
    pub cpu_us_per_move_frame: Option<f64>,
}

impl Report {
    /// The numbers compared between targets.
    pub fn key_metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("move_frames_per_sec", self.move_frames_per_sec),
            ("moves_per_sec", self.moves_per_sec),
            ("ack_p50_ms", self.ack.p50_ms),
            ("ack_p99_ms", self.ack.p99_ms),
            ("ack_p999_ms", self.ack.p999_ms),
            (
                "cpu_us_per_move_frame",
                self.cpu_us_per_move_frame.unwrap_or(f64::NAN),
            ),
        ]
    }

    /// One line for people.
    pub fn human(&self) -> String {
        let rate = if self.rate > 0.0 {
            format!("{:.0} moves/s asked", self.rate)
        } else {
            "as fast as acked".into()
        };
        format!(
            "rooms [{}]: {} games x {} spectators, {rate}, {:.1}s: {:.0} moves/s, {:.0} move frames/s ({:.0} frames/s), {} games, {} errors; ack {}; target CPU {}",
            self.target,
            self.rooms,
            self.spectators,
            self.secs,
            self.moves_per_sec,
            self.move_frames_per_sec,
            self.frames_per_sec,
            self.games,
            self.errors,
            self.ack,
            match (self.target_cpu_secs, self.cpu_us_per_move_frame) {
                (Some(c), Some(u)) => format!("{:.0}% of a core, {u:.1} us per move frame", 100.0 * c / self.secs),
                _ => "?".into(),
            }
        )
    }
}

/// Counters shared by every client of a run.
#[derive(Default)]
struct Counts {
    moves: AtomicU64,
    move_frames: AtomicU64,
    frames: AtomicU64,
    games: AtomicU64,
    errors: AtomicU64,
}

/// The measured window and the schedule.
struct Clock {
    from: Instant,
    to: Instant,
    /// Time between two moves of one game (zero: no schedule).
    interval: Duration,
}

impl Clock {
    fn inside(&self, t: Instant) -> bool {
        t >= self.from && t < self.to
    }
}

/// One room slot's coordination: the current room (generation, id), the joins X waits for, and
/// when the current game's first move was due.
struct Slot {
    room: watch::Sender<(u64, String)>,
    joined: tokio::sync::Mutex<mpsc::Receiver<u64>>,
    joined_tx: mpsc::Sender<u64>,
    game_start: AtomicU64,
    base: Instant,
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    X,
    O,
    Spectator,
}

/// Runs the rooms scenario against `target`.
pub async fn run(target: &Target, opts: &Opts) -> anyhow::Result<Report> {
    let script = Arc::new(script::fill(opts.board));
    let counts = Arc::new(Counts::default());
    let permits = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    // Connect everyone first; the clock starts when all are in.
    let mut members = Vec::new();
    let mut connecting = Vec::new();
    for r in 0..opts.rooms {
        for m in 0..opts.spectators + 2 {
            let (addr, permits) = (target.addr, permits.clone());
            connecting.push(tokio::spawn(async move {
                let _p = permits.acquire().await;
                client::hello(addr, &format!("r{r}m{m}")).await
            }));
        }
    }
    for c in connecting {
        members.push(c.await.context("connect task")?.context("connect")?);
    }
    let now = Instant::now();
    let clock = Arc::new(Clock {
        from: now + opts.warmup,
        to: now + opts.warmup + opts.duration,
        interval: if opts.rate > 0.0 {
            Duration::from_secs_f64(opts.rooms as f64 / opts.rate)
        } else {
            Duration::ZERO
        },
    });
    let cpu = tokio::spawn(cpu_in_window(target.pid, clock.from, clock.to));
    let mut tasks = Vec::new();
    let mut members = members.into_iter();
    for _ in 0..opts.rooms {
        let (joined_tx, joined_rx) = mpsc::channel(opts.spectators + 2);
        let slot = Arc::new(Slot {
            room: watch::channel((0, String::new())).0,
            joined: tokio::sync::Mutex::new(joined_rx),
            joined_tx,
            game_start: AtomicU64::new(0),
            base: now,
        });
        for m in 0..opts.spectators + 2 {
            let role = match m {
                0 => Role::X,
                1 => Role::O,
                _ => Role::Spectator,
            };
            let ws = members.next().expect("one connection per member");
            tasks.push(tokio::spawn(member(
                ws,
                role,
                slot.clone(),
                opts.spectators + 1,
                opts.board,
                script.clone(),
                clock.clone(),
                counts.clone(),
            )));
        }
    }
    let mut ack = Latency::default();
    for t in tasks {
        match t.await {
            Ok(Ok(l)) => ack.merge(&l),
            Ok(Err(e)) => {
                eprintln!("rooms: {e:#}");
                counts.errors.fetch_add(1, Relaxed);
            }
            Err(e) => return Err(e).context("member task"),
        }
    }
    let secs = opts.duration.as_secs_f64();
    let moves = counts.moves.load(Relaxed);
    let move_frames = counts.move_frames.load(Relaxed);
    let target_cpu_secs = cpu.await.ok().flatten();
    Ok(Report {
        target: target.name.clone(),
        rooms: opts.rooms,
        spectators: opts.spectators,
        rate: opts.rate,
        secs,
        moves,
        moves_per_sec: moves as f64 / secs,
        move_frames_per_sec: move_frames as f64 / secs,
        frames_per_sec: counts.frames.load(Relaxed) as f64 / secs,
        games: counts.games.load(Relaxed),
        errors: counts.errors.load(Relaxed),
        ack: ack.summary(),
        target_cpu_secs,
        cpu_us_per_move_frame: target_cpu_secs
            .filter(|_| move_frames > 0)
            .map(|c| c * 1e6 / move_frames as f64),
    })
}

/// CPU seconds process `pid` uses between `from` and `to`.
pub(crate) async fn cpu_in_window(pid: Option<u32>, from: Instant, to: Instant) -> Option<f64> {
    let pid = pid?;
    tokio::time::sleep_until(from).await;
    let a = crate::sys::cpu_secs(pid)?;
    tokio::time::sleep_until(to).await;
    Some(crate::sys::cpu_secs(pid)? - a)
}

/// How long a member keeps waiting for its last acknowledgement after the window closed.
const GRACE: Duration = Duration::from_secs(2);

#[allow(clippy::too_many_arguments)]
async fn member(
    mut ws: Ws,
    role: Role,
    slot: Arc<Slot>,
    others: usize,
    board: u8,
    script: Arc<Vec<(u8, u8)>>,
    clock: Arc<Clock>,
    counts: Arc<Counts>,
) -> anyhow::Result<Latency> {
    let mut ack = Latency::default();
    let mut gen = 0u64;
    let mut rooms = slot.room.subscribe();
    let last = script.len() as u64;
    let mut req = 0u64;
    'games: while Instant::now() < clock.to {
        // Into the next room.
        let room = if role == Role::X {
            req += 1;
            client::send(&mut ws, wire::create_room(board, req)).await?;
            let room = client::room_id(&client::expect(&mut ws, "room_joined").await?)?;
            gen += 1;
            slot.room.send_replace((gen, room.clone()));
            let mut joined = slot.joined.lock().await;
            let mut n = 0;
            while n < others {
                let got = tokio::time::timeout_at(clock.to + GRACE, joined.recv()).await;
                match got {
                    Ok(Some(g)) if g == gen => n += 1,
                    Ok(Some(_)) => {}
                    _ => break 'games,
                }
            }
            counts.games.fetch_add(1, Relaxed);
            slot.game_start
                .store(slot.base.elapsed().as_nanos() as u64, Relaxed);
            room
        } else {
            let want = gen + 1;
            // The watch's read guard is dropped at once: never held across an await.
            let next = match tokio::time::timeout_at(clock.to, rooms.wait_for(|(g, _)| *g >= want))
                .await
            {
                Ok(Ok(r)) => r.clone(),
                _ => break 'games,
            };
            let (g, room) = next;
            gen = g;
            let as_ = if role == Role::O {
                "player"
            } else {
                "spectator"
            };
            req += 1;
            client::send(&mut ws, wire::join_room(&room, as_, req)).await?;
            client::expect(&mut ws, "room_joined").await?;
            let _ = slot.joined_tx.send(gen).await;
            room
        };
        // The game.
        let mine = match role {
            Role::X => Some(1),
            Role::O => Some(0),
            Role::Spectator => None,
        };
        let mut seen = 0u64;
        let mut pending: Option<(u64, Instant)> = None;
        loop {
            let next = seen + 1;
            let my_turn = mine == Some(next % 2) && pending.is_none() && next <= last;
            let due = if clock.interval.is_zero() {
                Instant::now()
            } else {
                let start = slot.base + Duration::from_nanos(slot.game_start.load(Relaxed));
                start + clock.interval * (next as u32 - 1)
            };
            let stop_at = if pending.is_some() {
                clock.to + GRACE
            } else {
                clock.to
            };
            tokio::select! {
                biased;
                _ = tokio::time::sleep_until(stop_at) => break 'games,
                _ = tokio::time::sleep_until(due), if my_turn => {
                    let (x, y) = script[next as usize - 1];
                    pending = Some((next, Instant::now()));
                    client::send(&mut ws, wire::move_(&room, next, x, y)).await?;
                }
                text = client::next_text(&mut ws) => {
                    let Some(text) = text else { anyhow::bail!("connection ended") };
                    let now = Instant::now();
                    let inside = clock.inside(now);
                    if inside {
                        counts.frames.fetch_add(1, Relaxed);
                    }
                    let Some(m) = wire::read(&text) else { continue };
                    match m.ty {
                        "move" => {
                            seen = m.seq.unwrap_or(0);
                            if inside {
                                counts.move_frames.fetch_add(1, Relaxed);
                            }
                            if let Some((s, sent)) = pending {
                                if s == seen {
                                    pending = None;
                                    if clock.inside(sent) {
                                        ack.record(now - sent);
                                        counts.moves.fetch_add(1, Relaxed);
                                    }
                                }
                            }
                            if seen >= last {
                                break;
                            }
                        }
                        "error" => {
                            counts.errors.fetch_add(1, Relaxed);
                            if counts.errors.load(Relaxed) < 5 {
                                eprintln!("rooms: {text}");
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        client::send(&mut ws, wire::leave_room(&room)).await?;
    }
    client::close(ws).await;
    Ok(ack)
}

/// Convenience for the bots scenario and tests: a loopback target without a pid.
pub fn target(name: &str, addr: SocketAddr) -> Target {
    Target {
        name: name.into(),
        addr,
        pid: None,
    }
}
