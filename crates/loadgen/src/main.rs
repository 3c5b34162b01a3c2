//! `caro-loadgen`: drives caro-arena (and the baseline) over loopback with one of five
//! scenarios, prints a human summary and one JSON line per run, and with both targets the
//! medians and the server/baseline ratios. `--server` may name the nodes of a cluster (see
//! docs/performance.md, "Against a cluster").

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use caro_loadgen::scenario::rooms::Pairing;
use caro_loadgen::scenario::{abuse, bots, connections, fanout, rooms};
use caro_loadgen::stats::median;
use caro_loadgen::{spawn, sys, Node, Target};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use serde_json::json;

/// Load generator for caro-arena: loopback only, every run bounded in time and count.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    targets: Targets,
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Args, Debug)]
struct Targets {
    /// A running caro-arena (loopback address), or a cluster's nodes, comma-separated
    /// (`http://` is accepted): `fanout` and `rooms` spread their clients over the nodes, the
    /// other scenarios load the first one. Default: $CARO_CLUSTER_URLS, which scripts/cluster
    /// sets for its command.
    #[arg(long, global = true, value_delimiter = ',', env = "CARO_CLUSTER_URLS")]
    server: Vec<String>,
    /// Its pid, for memory and CPU (default: the process listening on its port); for a
    /// cluster, the nodes' pids in the same order.
    #[arg(long, global = true, value_delimiter = ',')]
    server_pid: Vec<u32>,
    /// With several --server nodes: run each scenario against the first node alone too
    /// (target `single`, after the cluster's run); the summary gives server/single ratios.
    #[arg(long, global = true)]
    single: bool,
    /// A running caro-baseline (loopback address).
    #[arg(long, global = true)]
    baseline: Option<String>,
    /// Its pid (default: found by port).
    #[arg(long, global = true)]
    baseline_pid: Option<u32>,
    /// Start a fresh caro-arena and caro-baseline for every run (the binaries next to this one,
    /// on port 0), instead of --server/--baseline.
    #[arg(long, global = true)]
    spawn: bool,
    /// With --spawn: the server's configuration (default crates/loadgen/load.toml;
    /// crates/loadgen/abuse.toml, the shipped limits, for `abuse`).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// With --spawn: the server binary (default: caro-arena next to this one).
    #[arg(long, global = true)]
    server_bin: Option<PathBuf>,
    /// With --spawn: only this target (`server` or `baseline`).
    #[arg(long, global = true)]
    only: Option<String>,
    /// Runs per target, alternating server and baseline; medians are reported.
    #[arg(long, global = true, default_value_t = 1)]
    repeat: usize,
}

#[derive(Subcommand, Debug, Clone)]
enum Scenario {
    /// N idle connections held open: server memory per connection.
    Connections {
        #[arg(short = 'n', long, default_value_t = 10_000)]
        connections: usize,
        /// Seconds to hold them.
        #[arg(long, default_value_t = 20.0)]
        hold: f64,
        /// Seconds after the last one opened before reading the memory.
        #[arg(long, default_value_t = 3.0)]
        settle: f64,
        /// Seconds between client pings.
        #[arg(long, default_value_t = 10.0)]
        heartbeat: f64,
        #[arg(long, default_value_t = 200)]
        concurrency: usize,
    },
    /// One game, S spectators, a move every T ms: move-to-spectator latency.
    Fanout {
        #[arg(short = 's', long, default_value_t = 2000)]
        spectators: usize,
        #[arg(short = 'm', long, default_value_t = 200)]
        moves: usize,
        /// Milliseconds between moves.
        #[arg(short = 't', long, default_value_t = 50)]
        interval_ms: u64,
        #[arg(long, default_value_t = 32)]
        board: u8,
        #[arg(long, default_value_t = 200)]
        concurrency: usize,
    },
    /// R games with K spectators each: moves/s, frames/s, ack latency.
    Rooms {
        #[command(flatten)]
        rooms: RoomsArgs,
        /// After the full-speed runs, run again at half the server's median move rate.
        #[arg(long)]
        then_half: bool,
    },
    /// `rooms` at a set rate, without and then with every bot search slot busy.
    Bots {
        #[command(flatten)]
        rooms: RoomsArgs,
        /// Human-vs-bot games (at least the server's search.max_concurrent).
        #[arg(long, default_value_t = 4)]
        bot_games: usize,
        /// Bot level (the strongest of config.toml by default).
        #[arg(long, default_value = "master")]
        level: String,
    },
    /// Hostile clients against the shipped limits: slow readers, floods, a session flood, a bot
    /// hog; what each costs the other players (server only).
    Abuse {
        /// Clients that never read and ask for `list_rooms`.
        #[arg(long, default_value_t = 10)]
        slow_clients: usize,
        /// Rooms opened before they ask.
        #[arg(long, default_value_t = 200)]
        rooms: usize,
        /// Length of the room creators' names (the server's limits.max_name_chars, 24 as
        /// shipped: the largest replies it allows).
        #[arg(long, default_value_t = 24)]
        creator_name_chars: usize,
        /// `list_rooms` per second per slow client (under limits.rate_per_sec).
        #[arg(long, default_value_t = 9.0)]
        slow_rate: f64,
        /// Seconds the slow clients ask (the server's socket buffer takes up to 4 MiB per
        /// client on Linux before its own queue fills).
        #[arg(long, default_value_t = 30.0)]
        slow_secs: f64,
        /// Clients flooding messages (one more floods WebSocket pings).
        #[arg(long, default_value_t = 4)]
        flooders: usize,
        /// Scripted games played beside the floods.
        #[arg(long, default_value_t = 4)]
        pairs: usize,
        /// Their moves per second, over all games (each player stays under the rate limit).
        #[arg(long, default_value_t = 20.0)]
        pair_rate: f64,
        /// Measured seconds of each players' run (without floods, during, during the session
        /// flood).
        #[arg(long, default_value_t = 8.0)]
        phase_secs: f64,
        /// Games against a bot one player asks for.
        #[arg(long, default_value_t = 30)]
        hog_games: usize,
        /// Their level.
        #[arg(long, default_value = "master")]
        hog_level: String,
        /// The bystander's bot level.
        #[arg(long, default_value = "beginner")]
        bystander_level: String,
        /// Bot replies the bystander times, without and with the hog.
        #[arg(long, default_value_t = 12)]
        bystander_moves: usize,
        /// Longest seconds of each bystander run.
        #[arg(long, default_value_t = 90.0)]
        bystander_secs: f64,
    },
}

#[derive(Args, Debug, Clone)]
struct RoomsArgs {
    #[arg(short = 'r', long, default_value_t = 100)]
    rooms: usize,
    /// Spectators per game.
    #[arg(short = 'k', long, default_value_t = 2)]
    spectators: usize,
    /// Measured seconds.
    #[arg(short = 'd', long, default_value_t = 10.0)]
    duration: f64,
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Moves per second over all games; 0 = each move as soon as the previous one arrives.
    #[arg(long, default_value_t = 0.0)]
    rate: f64,
    #[arg(long, default_value_t = 15)]
    board: u8,
    #[arg(long, default_value_t = 200)]
    concurrency: usize,
    /// Against a cluster, where a room's two players connect: `same` (the creator's node),
    /// `cross` (the opponent on the next node: every move crosses nodes) or `mixed` (every
    /// other room of each, reported apart).
    #[arg(long, default_value = "cross")]
    pairing: Pairing,
}

impl RoomsArgs {
    fn opts(&self) -> rooms::Opts {
        rooms::Opts {
            rooms: self.rooms,
            spectators: self.spectators,
            duration: Duration::from_secs_f64(self.duration),
            warmup: Duration::from_secs_f64(self.warmup),
            rate: self.rate,
            board: self.board,
            concurrency: self.concurrency,
            pairing: self.pairing,
        }
    }
}

/// A report of any scenario.
#[derive(Serialize)]
#[serde(untagged)]
enum Report {
    Connections(connections::Report),
    Fanout(fanout::Report),
    Rooms(rooms::Report),
    Bots(Box<bots::Report>),
    Abuse(Box<abuse::Report>),
}

impl Report {
    /// The numbers compared between targets, with a cluster's per-node (and per-pairing) ones.
    fn key_metrics(&self) -> Vec<(String, f64)> {
        let (m, more) = match self {
            Report::Connections(r) => (r.key_metrics(), Vec::new()),
            Report::Fanout(r) => (r.key_metrics(), r.node_metrics()),
            Report::Rooms(r) => (r.key_metrics(), r.part_metrics()),
            Report::Bots(r) => (r.key_metrics(), Vec::new()),
            Report::Abuse(r) => (r.key_metrics(), Vec::new()),
        };
        m.into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(more)
            .collect()
    }
    fn human(&self) -> String {
        match self {
            Report::Connections(r) => r.human(),
            Report::Fanout(r) => r.human(),
            Report::Rooms(r) => r.human(),
            Report::Bots(r) => r.human(),
            Report::Abuse(r) => r.human(),
        }
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let nofile = sys::raise_nofile();
    eprintln!("caro-loadgen: RLIMIT_NOFILE soft limit {nofile}");
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(run(cli))
}

/// The binaries next to this one (target/<profile>/).
fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    let p = me.with_file_name(name);
    if !p.exists() {
        bail!(
            "{} not found: build it first (cargo build --release --workspace)",
            p.display()
        );
    }
    Ok(p)
}

/// One target of a run: either given by its nodes' addresses, or a fresh process (no
/// addresses).
struct Which {
    name: &'static str,
    addrs: Vec<String>,
    pids: Vec<u32>,
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let t = &cli.targets;
    let mut which = Vec::new();
    let wanted = |n: &str| t.only.as_deref().map_or(true, |o| o == n);
    let has_baseline = !matches!(cli.scenario, Scenario::Bots { .. } | Scenario::Abuse { .. });
    if t.spawn {
        if wanted("server") {
            which.push(Which {
                name: "server",
                addrs: Vec::new(),
                pids: Vec::new(),
            });
        }
        if wanted("baseline") && has_baseline {
            which.push(Which {
                name: "baseline",
                addrs: Vec::new(),
                pids: Vec::new(),
            });
        }
    } else {
        if !t.server.is_empty() {
            which.push(Which {
                name: "server",
                addrs: t.server.clone(),
                pids: t.server_pid.clone(),
            });
            if t.single && t.server.len() > 1 {
                which.push(Which {
                    name: "single",
                    addrs: t.server[..1].to_vec(),
                    pids: t.server_pid.iter().take(1).copied().collect(),
                });
            }
        }
        if let (Some(a), true) = (&t.baseline, has_baseline) {
            which.push(Which {
                name: "baseline",
                addrs: vec![a.clone()],
                pids: t.baseline_pid.into_iter().collect(),
            });
        }
    }
    if t.server.len() > 1
        && matches!(
            cli.scenario,
            Scenario::Connections { .. } | Scenario::Abuse { .. }
        )
    {
        eprintln!(
            "caro-loadgen: {} loads the first node only",
            scenario_name(&cli.scenario)
        );
    }
    if which.is_empty() {
        bail!("nothing to load: give --server and/or --baseline addresses, or --spawn");
    }
    let scenario_name = scenario_name(&cli.scenario);
    let names: Vec<&'static str> = which.iter().map(|w| w.name).collect();
    let mut metrics: Vec<(&'static str, Vec<(String, f64)>)> = Vec::new();
    for run in 1..=t.repeat.max(1) {
        for w in &which {
            let report = run_one(&cli, w, &cli.scenario).await?;
            emit(scenario_name, run, &report);
            metrics.push((w.name, report.key_metrics()));
        }
    }
    summarize(scenario_name, &names, &metrics);
    if let Scenario::Rooms {
        rooms: args,
        then_half: true,
    } = &cli.scenario
    {
        let full: Vec<f64> = metrics
            .iter()
            .filter(|(n, _)| *n == "server")
            .filter_map(|(_, m)| {
                m.iter()
                    .find(|(k, _)| k == "moves_per_sec")
                    .map(|(_, v)| *v)
            })
            .collect();
        let half = median(&full) / 2.0;
        if half > 0.0 {
            let mut a = args.clone();
            a.rate = half;
            let half_scenario = Scenario::Rooms {
                rooms: a,
                then_half: false,
            };
            let mut metrics = Vec::new();
            for run in 1..=t.repeat.max(1) {
                for w in &which {
                    let report = run_one(&cli, w, &half_scenario).await?;
                    emit("rooms_half", run, &report);
                    metrics.push((w.name, report.key_metrics()));
                }
            }
            summarize("rooms_half", &names, &metrics);
        }
    }
    Ok(())
}

fn scenario_name(s: &Scenario) -> &'static str {
    match s {
        Scenario::Connections { .. } => "connections",
        Scenario::Fanout { .. } => "fanout",
        Scenario::Rooms { .. } => "rooms",
        Scenario::Bots { .. } => "bots",
        Scenario::Abuse { .. } => "abuse",
    }
}

async fn run_one(cli: &Cli, w: &Which, scenario: &Scenario) -> anyhow::Result<Report> {
    let t = &cli.targets;
    let mut spawned = None;
    let target = if !w.addrs.is_empty() {
        let mut nodes = Vec::new();
        for (i, a) in w.addrs.iter().enumerate() {
            let addr = sys::loopback(sys::host_port(a))?;
            let pid = w
                .pids
                .get(i)
                .copied()
                .or_else(|| sys::pid_listening_on(addr.port()));
            nodes.push(Node { addr, pid });
        }
        let first = nodes.remove(0);
        Target {
            name: w.name.into(),
            addr: first.addr,
            pid: first.pid,
            peers: nodes,
        }
    } else {
        let s = if w.name == "server" {
            // The abuse scenario measures what an operator gets: the shipped limits.
            let default = match scenario {
                Scenario::Abuse { .. } => "crates/loadgen/abuse.toml",
                _ => "crates/loadgen/load.toml",
            };
            let config = t
                .config
                .as_ref()
                .map_or(default.into(), |c| c.display().to_string());
            let bin = match &t.server_bin {
                Some(b) => b.clone(),
                None => sibling("caro-arena")?,
            };
            spawn::start(&bin, &["--config".into(), config]).await?
        } else {
            spawn::start(&sibling("caro-baseline")?, &[]).await?
        };
        let target = Target::single(w.name, sys::loopback(&s.addr.to_string())?, Some(s.pid));
        spawned = Some(s);
        // Let the fresh process finish starting (RSS before is read at the scenario's start).
        tokio::time::sleep(Duration::from_millis(300)).await;
        target
    };
    let report = match scenario {
        Scenario::Connections {
            connections,
            hold,
            settle,
            heartbeat,
            concurrency,
        } => {
            let o = connections::Opts {
                connections: *connections,
                concurrency: *concurrency,
                hold: Duration::from_secs_f64(*hold),
                settle: Duration::from_secs_f64(*settle),
                heartbeat: Duration::from_secs_f64(*heartbeat),
            };
            Report::Connections(connections::run(&target, &o).await?)
        }
        Scenario::Fanout {
            spectators,
            moves,
            interval_ms,
            board,
            concurrency,
        } => {
            let o = fanout::Opts {
                spectators: *spectators,
                moves: *moves,
                interval: Duration::from_millis(*interval_ms),
                board: *board,
                concurrency: *concurrency,
            };
            Report::Fanout(fanout::run(&target, &o).await?)
        }
        Scenario::Rooms { rooms: a, .. } => Report::Rooms(rooms::run(&target, &a.opts()).await?),
        Scenario::Bots {
            rooms: a,
            bot_games,
            level,
        } => {
            let o = bots::Opts {
                rooms: a.opts(),
                bot_games: *bot_games,
                level: level.clone(),
            };
            Report::Bots(Box::new(bots::run(&target, &o).await.context("bots")?))
        }
        Scenario::Abuse {
            slow_clients,
            rooms,
            creator_name_chars,
            slow_rate,
            slow_secs,
            flooders,
            pairs,
            pair_rate,
            phase_secs,
            hog_games,
            hog_level,
            bystander_level,
            bystander_moves,
            bystander_secs,
        } => {
            let o = abuse::Opts {
                slow_clients: *slow_clients,
                rooms: *rooms,
                creator_name_chars: *creator_name_chars,
                slow_rate: *slow_rate,
                slow_time: Duration::from_secs_f64(*slow_secs),
                flooders: *flooders,
                pairs: *pairs,
                pair_rate: *pair_rate,
                phase_time: Duration::from_secs_f64(*phase_secs),
                hog_games: *hog_games,
                hog_level: hog_level.clone(),
                bystander_level: bystander_level.clone(),
                bystander_moves: *bystander_moves,
                bystander_time: Duration::from_secs_f64(*bystander_secs),
            };
            Report::Abuse(Box::new(abuse::run(&target, &o).await.context("abuse")?))
        }
    };
    if let Some(s) = spawned {
        s.stop().await;
    }
    Ok(report)
}

fn emit(scenario: &str, run: usize, report: &Report) {
    println!("{}", report.human());
    #[derive(Serialize)]
    struct Line<'a> {
        scenario: &'a str,
        run: usize,
        #[serde(flatten)]
        report: &'a Report,
    }
    println!(
        "{}",
        serde_json::to_string(&Line {
            scenario,
            run,
            report
        })
        .unwrap_or_default()
    );
}

/// Medians per target (in the order of `names`) and the server's ratio to each other target:
/// `ratio` is server/baseline, `ratio_single` server/single (a cluster against its first node).
fn summarize(scenario: &str, names: &[&'static str], runs: &[(&'static str, Vec<(String, f64)>)]) {
    let mut out = serde_json::Map::new();
    let keys: Vec<&str> = runs
        .first()
        .map(|(_, m)| m.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let med = |target: &str, key: &str| {
        let v: Vec<f64> = runs
            .iter()
            .filter(|(n, _)| *n == target)
            .filter_map(|(_, m)| m.iter().find(|(k, _)| k == key).map(|(_, v)| *v))
            .collect();
        (!v.is_empty()).then(|| median(&v))
    };
    let others: Vec<&str> = names.iter().copied().filter(|n| *n != "server").collect();
    let mut ratios: Vec<serde_json::Map<String, serde_json::Value>> =
        others.iter().map(|_| serde_json::Map::new()).collect();
    println!("== {scenario}: medians of {} run(s)", runs.len());
    let fmt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    for key in &keys {
        let s = med("server", key);
        let mut line = format!("  {key:>22}: server {:>12}", fmt(s));
        for name in &others {
            line += &format!("  {name} {:>12}", fmt(med(name, key)));
        }
        for (name, ratio) in others.iter().zip(&mut ratios) {
            let r = match (s, med(name, key)) {
                (Some(s), Some(o)) if o != 0.0 => Some(s / o),
                _ => None,
            };
            let label = if others.len() == 1 {
                "ratio".to_string()
            } else {
                format!("server/{name}")
            };
            line += &format!("  {label} {}", fmt(r));
            if let Some(r) = r {
                ratio.insert((*key).into(), json!(r));
            }
        }
        println!("{line}");
    }
    for target in names {
        let m: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .filter_map(|k| med(target, k).map(|v| ((*k).to_string(), json!(v))))
            .collect();
        if !m.is_empty() {
            out.insert((*target).into(), m.into());
        }
    }
    for (name, ratio) in others.iter().zip(ratios) {
        let key = if *name == "baseline" {
            "ratio".to_string()
        } else {
            format!("ratio_{name}")
        };
        out.insert(key, ratio.into());
    }
    if others.is_empty() {
        out.insert("ratio".into(), serde_json::Map::new().into());
    }
    println!("{}", json!({"scenario": scenario, "summary": out}));
}
