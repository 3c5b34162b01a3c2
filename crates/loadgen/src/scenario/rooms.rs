//! `rooms`: R games between scripted human players, each watched by K spectators, for a set
//! time; moves per second, frames delivered per second, and the movers' acknowledgement latency.
//!
//! Each room slot is a creator (X), an opponent (O) and K spectators, one task per connection.
//! X creates a room and publishes its id; the others join and tell X; X moves first. A player
//! moves as soon as the previous move reaches it (`rate` 0), or on a schedule of `rate` moves per
//! second shared by all games. When a game has played the whole script (a full board, no line),
//! everyone leaves and X opens the next room. Counting happens only inside the window that starts
//! after `warmup`; the acknowledgement of move k is the mover receiving its own move k back, the
//! opponent latency the other player receiving it.
//!
//! Against a cluster ([`Target::peers`]) room slot r's creator is on node r mod N and its
//! opponent on the same node ([`Pairing::Same`]) or the next one ([`Pairing::Cross`]: every move
//! reaches the opponent through another node), or every other slot of each ([`Pairing::Mixed`],
//! both measured in one run under the same load); spectators go round-robin over the nodes. The
//! report adds each node's figures and, mixed, each pairing's.

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
    /// Where a room's two players connect, against a cluster.
    pub pairing: Pairing,
}

/// Where the two players of a room connect, against a cluster (one server: the same place).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Both on the creator's node.
    Same,
    /// The opponent on the node after the creator's.
    Cross,
    /// Even room slots `Same`, odd ones `Cross`; slots 2i and 2i+1 start on node i, so
    /// that each node has as many of each.
    Mixed,
}

impl Pairing {
    /// `same`, `cross`, `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            Pairing::Same => "same",
            Pairing::Cross => "cross",
            Pairing::Mixed => "mixed",
        }
    }

    /// Whether room slot `r` is cross-node.
    fn crosses(self, r: usize) -> bool {
        match self {
            Pairing::Same => false,
            Pairing::Cross => true,
            Pairing::Mixed => r % 2 == 1,
        }
    }

    /// The node index (see [`Target::node`]) of member `m` of room slot `r`: 0 is the
    /// creator, 1 the opponent, 2.. the spectators.
    pub fn node_of(self, r: usize, m: usize) -> usize {
        let first = match self {
            Pairing::Mixed => r / 2,
            _ => r,
        };
        match m {
            0 => first,
            1 => first + usize::from(self.crosses(r)),
            k => first + k - 1,
        }
    }
}

impl std::str::FromStr for Pairing {
    type Err = String;
    fn from_str(s: &str) -> Result<Pairing, String> {
        match s {
            "same" => Ok(Pairing::Same),
            "cross" => Ok(Pairing::Cross),
            "mixed" => Ok(Pairing::Mixed),
            _ => Err(format!("pairing is same, cross or mixed, not {s:?}")),
        }
    }
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
    /// Copies of the moves sent in the window received by all clients (each read until a grace
    /// after the window), per second (the compared number).
    pub move_frames_per_sec: f64,
    /// Every frame received, per second (the server also sends room_update, game_over, ...).
    pub frames_per_sec: f64,
    /// Games started (including the first of each room).
    pub games: u64,
    /// Games started in the window per second: each game is a new room (`create_room`, two
    /// joins, K spectators, 25..225 moves, everyone leaves).
    pub rooms_per_sec: f64,
    /// `error` frames and failed clients.
    pub errors: u64,
    /// Mover's send to its own move coming back.
    pub ack: Percentiles,
    /// Mover's send to the other player receiving the move.
    pub opponent: Percentiles,
    /// CPU seconds the target process used in the window (with its pid known).
    pub target_cpu_secs: Option<f64>,
    /// Target CPU per `move` frame delivered, microseconds: the cost of the work itself,
    /// steadier than the rates when other processes share the cores.
    pub cpu_us_per_move_frame: Option<f64>,
    /// `same`, `cross` or `mixed` (see [`Pairing`]); `same` against one server.
    pub pairing: String,
    /// Nodes the clients were spread over (1: one server).
    pub nodes: usize,
    /// Each node's figures, in node order (empty for one server): moves and acks of the
    /// movers connected to it, opponent latency of the players receiving there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_node: Vec<Part>,
    /// With `mixed`: the same-node rooms' figures, then the cross-node rooms'.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_pairing: Vec<Part>,
}

/// The figures of a part of the clients (one node's, or one pairing's).
#[derive(Clone, Debug, Serialize)]
pub struct Part {
    /// The node's address, or `same` / `cross`.
    pub part: String,
    /// Moves acknowledged in the window per second.
    pub moves_per_sec: f64,
    /// Mover's send to its own move coming back.
    pub ack: Percentiles,
    /// Mover's send to the other player receiving the move.
    pub opponent: Percentiles,
}

/// What one member measured.
#[derive(Default)]
struct Measured {
    ack: Latency,
    opponent: Latency,
}

impl Measured {
    fn merge(&mut self, other: &Measured) {
        self.ack.merge(&other.ack);
        self.opponent.merge(&other.opponent);
    }

    fn part(&self, part: String, secs: f64) -> Part {
        Part {
            part,
            moves_per_sec: self.ack.len() as f64 / secs,
            ack: self.ack.summary(),
            opponent: self.opponent.summary(),
        }
    }
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
            ("opp_p50_ms", self.opponent.p50_ms),
            ("opp_p99_ms", self.opponent.p99_ms),
            ("rooms_per_sec", self.rooms_per_sec),
            (
                "cpu_us_per_move_frame",
                self.cpu_us_per_move_frame.unwrap_or(f64::NAN),
            ),
        ]
    }

    /// Each node's and each pairing's numbers, named `node<i>_...` and `same_...`,
    /// `cross_...` (none for one server).
    pub fn part_metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        let named = self
            .per_node
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("node{i}"), p))
            .chain(self.per_pairing.iter().map(|p| (p.part.clone(), p)));
        for (name, p) in named {
            m.push((format!("{name}_moves_per_sec"), p.moves_per_sec));
            m.push((format!("{name}_ack_p99_ms"), p.ack.p99_ms));
            m.push((format!("{name}_opp_p50_ms"), p.opponent.p50_ms));
            m.push((format!("{name}_opp_p99_ms"), p.opponent.p99_ms));
        }
        m
    }

    /// One line for people (and one more per node and per pairing of a cluster).
    pub fn human(&self) -> String {
        let mut h = self.line();
        if self.nodes > 1 {
            h += &format!("\n  {} nodes, {} pairing", self.nodes, self.pairing);
        }
        for p in self.per_node.iter().chain(&self.per_pairing) {
            h += &format!(
                "\n  {}: {:.0} moves/s; ack {}; opponent {}",
                p.part, p.moves_per_sec, p.ack, p.opponent
            );
        }
        h
    }

    fn line(&self) -> String {
        let rate = if self.rate > 0.0 {
            format!("{:.0} moves/s asked", self.rate)
        } else {
            "as fast as acked".into()
        };
        format!(
            "rooms [{}]: {} games x {} spectators, {rate}, {:.1}s: {:.0} moves/s, {:.0} move frames/s ({:.0} frames/s), {} games ({:.1} rooms/s), {} errors; ack {}; opponent p50={:.2}ms p99={:.2}ms; target CPU {}",
            self.target,
            self.rooms,
            self.spectators,
            self.secs,
            self.moves_per_sec,
            self.move_frames_per_sec,
            self.frames_per_sec,
            self.games,
            self.rooms_per_sec,
            self.errors,
            self.ack,
            self.opponent.p50_ms,
            self.opponent.p99_ms,
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
    games_in_window: AtomicU64,
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
    /// The current game's generation and when each of its moves was sent (seq 1 first): a copy
    /// of a move counts when the move was sent inside the window, and the opponent's latency
    /// runs from it.
    sends: parking_lot::Mutex<(u64, Vec<Instant>)>,
}

impl Slot {
    fn record_send(&self, gen: u64, seq: u64, at: Instant) {
        let mut s = self.sends.lock();
        if s.0 != gen {
            *s = (gen, Vec::new());
        }
        s.1.truncate(seq as usize - 1);
        s.1.push(at);
    }

    /// When move `seq` of game `gen` was sent, if it is the current game's.
    fn sent_at(&self, gen: u64, seq: u64) -> Option<Instant> {
        let s = self.sends.lock();
        (s.0 == gen)
            .then(|| s.1.get((seq as usize).checked_sub(1)?).copied())
            .flatten()
    }

    /// Whether game `gen` has moves sent after move `seen` (copies still on their way).
    fn unheard(&self, gen: u64, seen: u64) -> bool {
        let s = self.sends.lock();
        s.0 == gen && s.1.len() as u64 > seen
    }
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
            let (addr, permits) = (target.node(opts.pairing.node_of(r, m)), permits.clone());
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
    let cpu = tokio::spawn(cpu_in_window(target.clone(), clock.from, clock.to));
    let mut tasks = Vec::new();
    let mut members = members.into_iter();
    for r in 0..opts.rooms {
        let (joined_tx, joined_rx) = mpsc::channel(opts.spectators + 2);
        let slot = Arc::new(Slot {
            room: watch::channel((0, String::new())).0,
            joined: tokio::sync::Mutex::new(joined_rx),
            joined_tx,
            game_start: AtomicU64::new(0),
            base: now,
            sends: parking_lot::Mutex::new((0, Vec::new())),
        });
        for m in 0..opts.spectators + 2 {
            let role = match m {
                0 => Role::X,
                1 => Role::O,
                _ => Role::Spectator,
            };
            let ws = members.next().expect("one connection per member");
            let node = opts.pairing.node_of(r, m) % target.nodes();
            let crosses = opts.pairing.crosses(r);
            tasks.push((
                node,
                crosses,
                tokio::spawn(member(
                    ws,
                    role,
                    slot.clone(),
                    opts.spectators + 1,
                    opts.board,
                    script.clone(),
                    clock.clone(),
                    counts.clone(),
                )),
            ));
        }
    }
    let mut all = Measured::default();
    let mut per_node: Vec<Measured> = (0..target.nodes()).map(|_| Measured::default()).collect();
    let mut per_pairing = [Measured::default(), Measured::default()];
    for (node, crosses, t) in tasks {
        match t.await {
            Ok(Ok(l)) => {
                all.merge(&l);
                per_node[node].merge(&l);
                per_pairing[usize::from(crosses)].merge(&l);
            }
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
    let per_node = if target.nodes() > 1 {
        per_node
            .iter()
            .enumerate()
            .map(|(i, m)| m.part(target.node(i).to_string(), secs))
            .collect()
    } else {
        Vec::new()
    };
    // One node: every room is same-node, whatever was asked.
    let pairing = if target.nodes() > 1 {
        opts.pairing
    } else {
        Pairing::Same
    };
    let per_pairing = if pairing == Pairing::Mixed {
        let [same, cross] = &per_pairing;
        vec![
            same.part("same".into(), secs),
            cross.part("cross".into(), secs),
        ]
    } else {
        Vec::new()
    };
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
        rooms_per_sec: counts.games_in_window.load(Relaxed) as f64 / secs,
        errors: counts.errors.load(Relaxed),
        ack: all.ack.summary(),
        opponent: all.opponent.summary(),
        target_cpu_secs,
        cpu_us_per_move_frame: target_cpu_secs
            .filter(|_| move_frames > 0)
            .map(|c| c * 1e6 / move_frames as f64),
        pairing: pairing.name().into(),
        nodes: target.nodes(),
        per_node,
        per_pairing,
    })
}

/// CPU seconds the target's processes use between `from` and `to`.
pub(crate) async fn cpu_in_window(target: Target, from: Instant, to: Instant) -> Option<f64> {
    target.pid?;
    tokio::time::sleep_until(from).await;
    let a = target.cpu_secs()?;
    tokio::time::sleep_until(to).await;
    Some(target.cpu_secs()? - a)
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
) -> anyhow::Result<Measured> {
    let mut measured = Measured::default();
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
            if clock.inside(Instant::now()) {
                counts.games_in_window.fetch_add(1, Relaxed);
            }
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
            // Past the window, a member still reads its own acknowledgement and the copies of
            // moves already sent, for a while: every copy of a move sent inside the window counts.
            let stop_at = if pending.is_some() || slot.unheard(gen, seen) {
                clock.to + GRACE
            } else {
                clock.to
            };
            tokio::select! {
                biased;
                _ = tokio::time::sleep_until(stop_at) => {
                    if Instant::now() < clock.to + GRACE && slot.unheard(gen, seen) {
                        continue;
                    }
                    break 'games;
                }
                _ = tokio::time::sleep_until(due), if my_turn => {
                    let (x, y) = script[next as usize - 1];
                    let sent = Instant::now();
                    pending = Some((next, sent));
                    slot.record_send(gen, next, sent);
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
                            let sent_at = slot.sent_at(gen, seen);
                            if sent_at.is_some_and(|t| clock.inside(t)) {
                                counts.move_frames.fetch_add(1, Relaxed);
                            }
                            if let Some((s, sent)) = pending {
                                if s == seen {
                                    pending = None;
                                    if clock.inside(sent) {
                                        measured.ack.record(now - sent);
                                        counts.moves.fetch_add(1, Relaxed);
                                    }
                                }
                            }
                            // The opponent's move: the mover wrote its send time before sending.
                            if mine.is_some_and(|p| seen % 2 != p) {
                                if let Some(sent) = sent_at.filter(|&t| clock.inside(t)) {
                                    measured.opponent.record(now - sent);
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
    Ok(measured)
}

/// Convenience for the bots scenario and tests: a loopback target without a pid.
pub fn target(name: &str, addr: SocketAddr) -> Target {
    Target::single(name, addr, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_pairing_puts_the_opponent_on_the_next_node() {
        // Room slot 2: creator on node 2, spectators on 3, 4, ...
        assert_eq!(Pairing::Same.node_of(2, 0), 2);
        assert_eq!(Pairing::Same.node_of(2, 1), 2);
        assert_eq!(Pairing::Cross.node_of(2, 1), 3);
        assert_eq!(Pairing::Cross.node_of(2, 3), 4);
        // Mixed: even slots same, odd slots cross, two slots a node.
        assert_eq!(Pairing::Mixed.node_of(2, 0), 1);
        assert_eq!(Pairing::Mixed.node_of(2, 1), 1);
        assert_eq!(Pairing::Mixed.node_of(3, 0), 1);
        assert_eq!(Pairing::Mixed.node_of(3, 1), 2);
        assert_eq!("mixed".parse::<Pairing>(), Ok(Pairing::Mixed));
        assert!("both".parse::<Pairing>().is_err());
    }

    #[test]
    fn node_indices_go_round_robin_over_the_cluster() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut t = Target::single("server", a, None);
        assert_eq!((t.nodes(), t.node(0), t.node(5)), (1, a, a));
        t.peers.push(crate::Node { addr: b, pid: None });
        assert_eq!((t.nodes(), t.node(0), t.node(1), t.node(2)), (2, a, b, a));
        // Room slot 1 of a cross pairing on two nodes: creator on b, opponent back on a.
        assert_eq!(t.node(Pairing::Cross.node_of(1, 0)), b);
        assert_eq!(t.node(Pairing::Cross.node_of(1, 1)), a);
    }
}
