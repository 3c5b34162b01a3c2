//! `fanout`: one game watched by S spectators; the players move every T ms; the latency from a
//! move being sent to each spectator receiving it.
//!
//! Against a cluster ([`Target::peers`]) the players and the room are on the first node and
//! spectator i watches from node i mod N, so most deliveries cross nodes; the report adds each
//! node's latency (docs/performance.md, "Against a cluster").
//!
//! Times are taken in this process: a move's send time is stored (nanoseconds since the run's
//! start, in a shared table indexed by `seq`) just before the frame is written, and each
//! spectator subtracts it on receipt. The spectators' own scheduling on the shared cores is part
//! of what is measured, for the server and the baseline alike.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::client::{self, Ws};
use crate::stats::{Latency, Percentiles};
use crate::{script, wire, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Spectators of the one game.
    pub spectators: usize,
    /// Moves to play (at most the board's cells).
    pub moves: usize,
    /// Time between two moves.
    pub interval: Duration,
    /// Board side.
    pub board: u8,
    /// Spectator handshakes in flight at once.
    pub concurrency: usize,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `server` or `baseline`.
    pub target: String,
    /// Spectators asked for.
    pub spectators: usize,
    /// Spectators that joined.
    pub joined: usize,
    /// Moves played.
    pub moves: usize,
    /// Move-sent to spectator-received latency.
    pub latency: Percentiles,
    /// moves x joined spectators: what `latency.count` should be.
    pub expected_samples: u64,
    /// Mover's send to its own acknowledgement.
    pub ack: Percentiles,
    /// Target CPU per move frame delivered while the moves were played, microseconds (all
    /// nodes' CPU for a cluster).
    pub cpu_us_per_frame: Option<f64>,
    /// Nodes the spectators were spread over (1: one server).
    pub nodes: usize,
    /// Each node's spectators, in node order (empty for one server).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_node: Vec<NodeReport>,
}

/// What the spectators of one node of a cluster measured.
#[derive(Clone, Debug, Serialize)]
pub struct NodeReport {
    /// The node's address.
    pub node: String,
    /// Its spectators that joined.
    pub joined: usize,
    /// Move-sent to spectator-received latency on this node.
    pub latency: Percentiles,
}

impl Report {
    /// The numbers compared between targets.
    pub fn key_metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("p50_ms", self.latency.p50_ms),
            ("p99_ms", self.latency.p99_ms),
            ("p999_ms", self.latency.p999_ms),
            ("max_ms", self.latency.max_ms),
            ("samples", self.latency.count as f64),
            (
                "cpu_us_per_frame",
                self.cpu_us_per_frame.unwrap_or(f64::NAN),
            ),
        ]
    }

    /// Each node's numbers, named `node<i>_...` (none for one server).
    pub fn node_metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for (i, n) in self.per_node.iter().enumerate() {
            m.push((format!("node{i}_p50_ms"), n.latency.p50_ms));
            m.push((format!("node{i}_p99_ms"), n.latency.p99_ms));
            m.push((format!("node{i}_samples"), n.latency.count as f64));
        }
        m
    }

    /// One line for people (and one more per node of a cluster).
    pub fn human(&self) -> String {
        let mut h = format!(
            "fanout [{}]: {} spectators ({} joined), {} moves; move->spectator {} (expected {}); ack p99={:.2}ms; {} us target CPU per frame",
            self.target,
            self.spectators,
            self.joined,
            self.moves,
            self.latency,
            self.expected_samples,
            self.ack.p99_ms,
            self.cpu_us_per_frame.map_or("?".into(), |u| format!("{u:.1}")),
        );
        for (i, n) in self.per_node.iter().enumerate() {
            let room = if i == 0 { ", the room's node" } else { "" };
            h += &format!(
                "\n  node {i} ({}{room}): {} joined; move->spectator {}",
                n.node, n.joined, n.latency
            );
        }
        h
    }
}

/// Send times by `seq`, as nanoseconds since `base` plus one (0: not sent yet).
struct SendTimes {
    base: Instant,
    at: Vec<AtomicU64>,
}

impl SendTimes {
    fn mark(&self, seq: usize) {
        let ns = self.base.elapsed().as_nanos() as u64 + 1;
        self.at[seq].store(ns, Ordering::Release);
    }
    fn since(&self, seq: usize, now: Instant) -> Option<Duration> {
        let ns = self.at.get(seq)?.load(Ordering::Acquire);
        (ns > 0).then(|| now.saturating_duration_since(self.base + Duration::from_nanos(ns - 1)))
    }
}

/// Runs one fanout against `target`.
pub async fn run(target: &Target, opts: &Opts) -> anyhow::Result<Report> {
    let script = Arc::new(script::fill(opts.board));
    let moves = opts.moves.min(script.len());
    let times = Arc::new(SendTimes {
        base: Instant::now(),
        at: (0..=moves).map(|_| AtomicU64::new(0)).collect(),
    });

    let mut x = client::hello(target.addr, "fan-x")
        .await
        .context("player x")?;
    client::send(&mut x, wire::create_room(opts.board, 1)).await?;
    let room = client::room_id(&client::expect(&mut x, "room_joined").await?)?;
    let mut o = client::hello(target.addr, "fan-o")
        .await
        .context("player o")?;
    client::send(&mut o, wire::join_room(&room, "player", 1)).await?;
    client::expect(&mut o, "room_joined").await?;

    // Spectators: join (a few at a time), then record every move until the last one.
    let joined = Arc::new(AtomicUsize::new(0));
    let settled = Arc::new(AtomicUsize::new(0));
    let permits = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let give_up =
        Instant::now() + client::STEP * 2 + opts.interval * moves as u32 + Duration::from_secs(10);
    let mut watchers = Vec::with_capacity(opts.spectators);
    for i in 0..opts.spectators {
        let (addr, room, joined, settled, permits, times) = (
            target.node(i),
            room.clone(),
            joined.clone(),
            settled.clone(),
            permits.clone(),
            times.clone(),
        );
        watchers.push(tokio::spawn(async move {
            let ws = {
                let _p = permits.acquire().await;
                spectator_join(addr, &room, i).await
            };
            settled.fetch_add(1, Ordering::Relaxed);
            let mut ws = match ws {
                Ok(ws) => ws,
                Err(e) => {
                    eprintln!("fanout: spectator {i}: {e:#}");
                    return (false, Latency::default());
                }
            };
            joined.fetch_add(1, Ordering::Relaxed);
            let mut lat = Latency::default();
            let watch = async {
                while let Some(text) = client::next_text(&mut ws).await {
                    let now = Instant::now();
                    let Some(m) = wire::read(&text) else { continue };
                    if m.ty != "move" {
                        continue;
                    }
                    let seq = m.seq.unwrap_or(0) as usize;
                    if let Some(d) = times.since(seq, now) {
                        lat.record(d);
                    }
                    if seq >= moves {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout_at(give_up, watch).await;
            client::close(ws).await;
            (true, lat)
        }));
    }
    while settled.load(Ordering::Relaxed) < opts.spectators {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Let the joins' room_update settle before the first move.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let start = Instant::now();
    let cpu_before = target.cpu_secs();
    let players = [(x, 1), (o, 2)].map(|(client, seat)| {
        tokio::spawn(player(
            client,
            room.clone(),
            seat,
            script.clone(),
            moves,
            opts.interval,
            start,
            times.clone(),
            give_up,
        ))
    });
    let mut ack = Latency::default();
    for p in players {
        ack.merge(&p.await.context("player task")??);
    }
    let mut latency = Latency::default();
    let nodes = target.nodes();
    let mut per_node = vec![(0, Latency::default()); nodes];
    for (i, w) in watchers.into_iter().enumerate() {
        let (ok, lat) = w.await.context("spectator task")?;
        latency.merge(&lat);
        let node = &mut per_node[i % nodes];
        node.0 += usize::from(ok);
        node.1.merge(&lat);
    }
    let per_node = if nodes > 1 {
        per_node
            .iter()
            .enumerate()
            .map(|(i, (joined, lat))| NodeReport {
                node: target.node(i).to_string(),
                joined: *joined,
                latency: lat.summary(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let cpu = match (cpu_before, target.cpu_secs()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let joined = joined.load(Ordering::Relaxed);
    let frames = latency.len();
    Ok(Report {
        cpu_us_per_frame: cpu.filter(|_| frames > 0).map(|c| c * 1e6 / frames as f64),
        target: target.name.clone(),
        spectators: opts.spectators,
        joined,
        moves,
        latency: latency.summary(),
        expected_samples: moves as u64 * joined as u64,
        ack: ack.summary(),
        nodes,
        per_node,
    })
}

async fn spectator_join(addr: std::net::SocketAddr, room: &str, i: usize) -> anyhow::Result<Ws> {
    let mut ws = client::hello(addr, &format!("fan{i}")).await?;
    client::send(&mut ws, wire::join_room(room, "spectator", 1)).await?;
    client::expect(&mut ws, "room_joined").await?;
    Ok(ws)
}

/// Plays the moves of one seat (`first` = 1 for X, 2 for O): move k is sent at
/// `start + (k - 1) * interval`, or as soon as the previous move has arrived if that is later.
#[allow(clippy::too_many_arguments)]
async fn player(
    mut ws: Ws,
    room: String,
    first: usize,
    script: Arc<Vec<(u8, u8)>>,
    moves: usize,
    interval: Duration,
    start: Instant,
    times: Arc<SendTimes>,
    give_up: Instant,
) -> anyhow::Result<Latency> {
    let mut ack = Latency::default();
    let mut seen = 0usize; // the last move this player has received
    let mut next = first;
    let play = async {
        while seen < moves {
            let due = start + interval * (next as u32 - 1);
            let my_turn = next <= moves && seen + 1 == next;
            tokio::select! {
                _ = tokio::time::sleep_until(due), if my_turn => {
                    let (x, y) = script[next - 1];
                    times.mark(next);
                    client::send(&mut ws, wire::move_(&room, next as u64, x, y)).await?;
                    next += 2;
                }
                text = client::next_text(&mut ws) => {
                    let Some(text) = text else { anyhow::bail!("player {first}: connection ended") };
                    let now = Instant::now();
                    let Some(m) = wire::read(&text) else { continue };
                    if m.ty == "error" {
                        anyhow::bail!("player {first}: {text}");
                    }
                    if m.ty == "move" {
                        seen = m.seq.unwrap_or(0) as usize;
                        if seen % 2 == first % 2 {
                            if let Some(d) = times.since(seen, now) {
                                ack.record(d);
                            }
                        }
                    }
                }
            }
        }
        anyhow::Ok(())
    };
    tokio::time::timeout_at(give_up, play)
        .await
        .map_err(|_| anyhow::anyhow!("player {first}: the game did not finish in time"))??;
    client::close(ws).await;
    Ok(ack)
}
