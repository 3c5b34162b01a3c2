//! The generator's scenarios against a real caro-arena and the baseline, both started in this
//! process on port 0. Small numbers; the assertions are about counts and structure, never speed.
//! The cluster path (clients spread over several nodes, per-node figures) runs against one
//! server given twice: the spreading and the accounting are the generator's, whatever serves.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use caro_arena::config::Config;
use caro_arena::store::MemoryStore;
use caro_loadgen::scenario::rooms::Pairing;
use caro_loadgen::scenario::{abuse, bots, connections, fanout, rooms};
use caro_loadgen::{baseline, client, wire, Node, Target};
use tokio::sync::oneshot;

fn config() -> Config {
    Config::from_toml(
        r#"
[server]
log = "warn"
shutdown_timeout_ms = 5000
[limits]
max_spectators = 100
rate_per_sec = 100000.0
rate_burst = 100000
[search]
max_concurrent = 1
min_move_ms = 0
thinking_interval_ms = 0
[bots.quick]
description = "fast"
games = ["caro"]
max_depth = 2
time_ms = 30
"#,
    )
    .expect("test config")
}

/// A running server; stopping is dropping the sender.
struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn server() -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(caro_arena::run_with_store(
        listener,
        config(),
        Arc::new(MemoryStore::default()),
        async {
            let _ = stopped.await;
        },
    ));
    Running { addr, _stop: stop }
}

async fn baseline_server() -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(baseline::run(listener, async {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

fn target(name: &str, addr: SocketAddr) -> Target {
    Target::single(name, addr, Some(std::process::id()))
}

/// A "cluster" of two nodes that are the same server: every path of the multi-node code runs.
fn twice(name: &str, addr: SocketAddr) -> Target {
    let mut t = target(name, addr);
    t.peers.push(Node {
        addr,
        pid: Some(std::process::id()),
    });
    t
}

fn fanout_opts() -> fanout::Opts {
    fanout::Opts {
        spectators: 5,
        moves: 10,
        interval: Duration::from_millis(5),
        board: 15,
        concurrency: 4,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout_of_10_moves_to_5_spectators_yields_50_samples() {
    let s = server().await;
    let r = fanout::run(&target("server", s.addr), &fanout_opts())
        .await
        .unwrap();
    assert_eq!(r.joined, 5);
    assert_eq!(r.moves, 10);
    assert_eq!(r.expected_samples, 50);
    assert_eq!(r.latency.count, 50);
    assert_eq!(r.ack.count, 10);
    assert!(r.latency.p50_ms <= r.latency.p99_ms && r.latency.p99_ms <= r.latency.max_ms);
    assert_eq!((r.nodes, r.per_node.len()), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout_over_two_nodes_reports_each_nodes_spectators() {
    let s = server().await;
    let r = fanout::run(&twice("server", s.addr), &fanout_opts())
        .await
        .unwrap();
    assert_eq!((r.nodes, r.joined, r.latency.count), (2, 5, 50));
    // Spectators 0, 2, 4 on node 0 and 1, 3 on node 1: ten moves each.
    let per: Vec<_> = r
        .per_node
        .iter()
        .map(|n| (n.node.clone(), n.joined, n.latency.count))
        .collect();
    let a = s.addr.to_string();
    assert_eq!(per, [(a.clone(), 3, 30), (a, 2, 20)]);
    // One process behind both addresses: its CPU is counted once, and read.
    assert!(r.cpu_us_per_frame.is_some());
    assert!(r.human().contains("node 1 ("), "{}", r.human());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout_against_the_baseline_yields_the_same_counts() {
    let b = baseline_server().await;
    let r = fanout::run(&target("baseline", b.addr), &fanout_opts())
        .await
        .unwrap();
    assert_eq!(
        (r.joined, r.moves, r.latency.count, r.ack.count),
        (5, 10, 50, 10)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_holds_20_and_reads_the_memory() {
    let s = server().await;
    let o = connections::Opts {
        connections: 20,
        concurrency: 5,
        hold: Duration::from_millis(300),
        settle: Duration::from_millis(100),
        heartbeat: Duration::from_millis(50),
    };
    let r = connections::run(&target("server", s.addr), &o)
        .await
        .unwrap();
    assert_eq!((r.opened, r.held, r.failed), (20, 20, 0));
    assert!(r.rss_before.is_some() && r.rss_after.is_some());
    assert!(r.bytes_per_connection.is_some());
    let b = baseline_server().await;
    let r = connections::run(&target("baseline", b.addr), &o)
        .await
        .unwrap();
    assert_eq!((r.opened, r.held, r.failed), (20, 20, 0));
}

fn rooms_opts() -> rooms::Opts {
    rooms::Opts {
        rooms: 2,
        spectators: 1,
        duration: Duration::from_millis(1500),
        warmup: Duration::from_millis(200),
        rate: 0.0,
        // 25 moves a game, so the rooms start new games within the run.
        board: 5,
        concurrency: 4,
        pairing: Pairing::Cross,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_play_scripted_games_without_errors() {
    for (name, running) in [
        ("server", server().await),
        ("baseline", baseline_server().await),
    ] {
        let r = rooms::run(&target(name, running.addr), &rooms_opts())
            .await
            .unwrap();
        assert_eq!(r.errors, 0, "{name}: {}", r.human());
        assert!(r.games >= 2, "{name}: {}", r.human());
        assert!(r.moves > 0, "{name}: {}", r.human());
        assert_eq!(r.ack.count, r.moves, "{name}: one ack per counted move");
        assert_opponents_hear_the_moves(&r, rooms_opts().rooms);
        // One server: cross pairing was asked, every room is same-node.
        assert_eq!((r.nodes, r.pairing.as_str()), (1, "same"));
        assert!(r.per_node.is_empty() && r.per_pairing.is_empty());
        // Each move reaches its three members (the mover's copy is the ack). Copies and moves
        // both count by when the move was sent, and every member reads on past the window for
        // the copies on their way, so the counts agree (eight runs beside two busy loops read
        // exactly 3 per move); a room's last move can still miss by an ack or a copy arriving
        // after the grace.
        let opts = rooms_opts();
        let copies = opts.spectators as u64 + 2;
        let move_frames = (r.move_frames_per_sec * r.secs).round() as u64;
        let slack = copies * opts.rooms as u64;
        assert!(
            move_frames + slack >= copies * r.moves && move_frames <= copies * r.moves + slack,
            "{name}: {move_frames} move frames for {} moves: {}",
            r.moves,
            r.human()
        );
    }
}

/// What every rooms report must hold: each move sent in the window is heard by the opponent
/// (but the last one of each room can be heard after the opponent's window closed) and
/// acknowledged to the mover.
fn assert_opponents_hear_the_moves(r: &rooms::Report, rooms: usize) {
    assert!(
        r.opponent.count <= r.moves && r.opponent.count + rooms as u64 >= r.moves,
        "{} opponent samples for {} moves: {}",
        r.opponent.count,
        r.moves,
        r.human()
    );
    assert!((r.rooms_per_sec * r.secs).round() as u64 <= r.games);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_with_cross_node_pairs_report_each_node() {
    let s = server().await;
    let o = rooms_opts();
    let r = rooms::run(&twice("server", s.addr), &o).await.unwrap();
    let h = r.human();
    assert_eq!(r.errors, 0, "{h}");
    assert!(r.moves > 0, "{h}");
    assert_eq!((r.nodes, r.pairing.as_str()), (2, "cross"), "{h}");
    assert!(r.per_pairing.is_empty(), "{h}");
    let parts: Vec<_> = r.per_node.iter().map(|p| p.part.clone()).collect();
    assert_eq!(parts, [s.addr.to_string(), s.addr.to_string()]);
    // Each counted move is acknowledged to its mover on one node or the other, and with both
    // players of every room on different nodes each node has movers.
    let acks: Vec<u64> = r.per_node.iter().map(|p| p.ack.count).collect();
    assert_eq!(acks.iter().sum::<u64>(), r.moves, "{h}");
    assert!(acks.iter().all(|&n| n > 0), "{h}");
    let opp: u64 = r.per_node.iter().map(|p| p.opponent.count).sum();
    assert_eq!(opp, r.opponent.count, "{h}");
    assert_opponents_hear_the_moves(&r, o.rooms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_with_mixed_pairing_report_same_and_cross_apart() {
    let s = server().await;
    let mut o = rooms_opts();
    o.pairing = Pairing::Mixed;
    let r = rooms::run(&twice("server", s.addr), &o).await.unwrap();
    let h = r.human();
    assert_eq!(r.errors, 0, "{h}");
    // Room slot 0 is same-node, slot 1 cross-node.
    let parts: Vec<_> = r.per_pairing.iter().map(|p| p.part.as_str()).collect();
    assert_eq!(parts, ["same", "cross"], "{h}");
    let acks: Vec<u64> = r.per_pairing.iter().map(|p| p.ack.count).collect();
    assert_eq!(acks.iter().sum::<u64>(), r.moves, "{h}");
    assert!(acks.iter().all(|&n| n > 0), "{h}");
    assert_opponents_hear_the_moves(&r, o.rooms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_at_a_set_rate_play_too() {
    let s = server().await;
    let mut o = rooms_opts();
    o.rate = 40.0;
    let r = rooms::run(&target("server", s.addr), &o).await.unwrap();
    assert_eq!(r.errors, 0, "{}", r.human());
    assert_eq!(r.ack.count, r.moves);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_runs_the_rooms_traffic_twice_beside_bot_games() {
    let s = server().await;
    let mut ro = rooms_opts();
    ro.rate = 20.0;
    ro.board = 15;
    let o = bots::Opts {
        rooms: ro,
        bot_games: 2,
        level: "quick".into(),
    };
    let r = bots::run(&target("server", s.addr), &o).await.unwrap();
    assert_eq!(r.without.errors, 0, "{}", r.human());
    assert_eq!(r.with.errors, 0, "{}", r.human());
    assert!(r.bot_game_ack.count > 0, "{}", r.human());
    assert!(r.searches_active_mean.is_finite(), "{}", r.human());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baseline_relays_a_frame_to_everyone_in_the_room() {
    let b = baseline_server().await;
    let mut x = client::hello(b.addr, "x").await.unwrap();
    client::send(&mut x, wire::create_room(15, 1))
        .await
        .unwrap();
    let joined = client::expect(&mut x, "room_joined").await.unwrap();
    let room = client::room_id(&joined).unwrap();
    let mut others = Vec::new();
    for as_ in ["player", "spectator", "spectator"] {
        let mut c = client::hello(b.addr, as_).await.unwrap();
        client::send(&mut c, wire::join_room(&room, as_, 2))
            .await
            .unwrap();
        client::expect(&mut c, "room_joined").await.unwrap();
        others.push(c);
    }
    let frame = wire::move_(&room, 1, 7, 7);
    client::send(&mut x, frame.clone()).await.unwrap();
    for c in others.iter_mut().chain(std::iter::once(&mut x)) {
        let got = client::next_text(c).await.unwrap();
        assert_eq!(got.as_str(), frame);
    }
    // A room of its own is not relayed to.
    let mut lone = client::hello(b.addr, "lone").await.unwrap();
    client::send(&mut lone, wire::create_room(15, 3))
        .await
        .unwrap();
    client::expect(&mut lone, "room_joined").await.unwrap();
    client::send(&mut x, wire::move_(&room, 2, 8, 8))
        .await
        .unwrap();
    client::send(&mut lone, wire::move_("mine", 1, 0, 0))
        .await
        .unwrap();
    let got = client::next_text(&mut lone).await.unwrap();
    assert_eq!(got.as_str(), wire::move_("mine", 1, 0, 0));
}

/// The shipped limits (every key of `[limits]` left at its default: per-address and per-player
/// caps on), except long names and a small byte bound on the send queue, so that three slow
/// clients asking for 100 rooms for four seconds overflow the server's socket buffers (up to
/// 4 MiB each on Linux) and then its queue; quick bot levels so the test is short.
fn shipped_limits() -> Config {
    Config::from_toml(
        r#"
[server]
log = "warn"
shutdown_timeout_ms = 5000
[limits]
send_queue_bytes = 8192
max_name_chars = 2000
[search]
min_move_ms = 0
thinking_interval_ms = 0
[bots.weak]
description = "fast"
games = ["caro"]
max_depth = 1
time_ms = 20
[bots.strong]
description = "slow"
games = ["caro"]
max_depth = 64
time_ms = 500
"#,
    )
    .expect("test config")
}

/// The abuse scenario, small: each phase measures what it says and the server's defences show
/// in the counts and close codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abuse_meets_each_defence_of_the_shipped_limits() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(caro_arena::run_with_store(
        listener,
        shipped_limits(),
        Arc::new(MemoryStore::default()),
        async {
            let _ = stopped.await;
        },
    ));
    let o = abuse::Opts {
        slow_clients: 3,
        rooms: 100,
        creator_name_chars: 2000,
        slow_rate: 9.0,
        slow_time: Duration::from_secs(4),
        flooders: 2,
        pairs: 1,
        pair_rate: 4.0,
        phase_time: Duration::from_secs(1),
        hog_games: 6,
        hog_level: "strong".into(),
        bystander_level: "weak".into(),
        bystander_moves: 3,
        bystander_time: Duration::from_secs(60),
    };
    let r = abuse::run(&target("server", addr), &o).await.unwrap();
    let h = r.human();
    // Slow readers: 100 rooms need ten creators at rooms_per_player = 10; every slow client
    // is dropped and reads 1013.
    assert_eq!((r.slow.clients, r.slow.rooms_open), (3, 100), "{h}");
    assert_eq!(r.slow.dropped, Some(3.0), "{h}");
    assert_eq!(r.slow.close_codes.get("1013"), Some(&3), "{h}");
    assert!(r.slow.rss_before.is_some() && r.slow.bytes_per_slow_client.is_some());
    // Floods: every flood connection ends with 1008, the players are served meanwhile.
    assert!(r.floods.connections >= 3, "{h}");
    assert_eq!(
        r.floods.close_codes.keys().collect::<Vec<_>>(),
        ["1008"],
        "{h}"
    );
    assert_eq!(
        r.floods.ping_close_codes.keys().collect::<Vec<_>>(),
        ["1008"],
        "{h}"
    );
    assert!(
        r.floods.ack_without.count > 0 && r.floods.ack_during.count > 0,
        "{h}"
    );
    assert_eq!(r.floods.player_errors, 0, "{h}");
    // Session flood: the burst of upgrades_per_ip_burst (50) and its refill are let in, the
    // rest refused with 429.
    assert!(r.sessions.accepted >= 50, "{h}");
    assert!(r.sessions.refused_429 > 0, "{h}");
    assert_eq!(r.sessions.other_errors, 0, "{h}");
    assert_eq!(r.sessions.player_errors, 0, "{h}");
    // Bot hog: bot_games_per_player = 4 of the 6 asked for.
    assert_eq!(
        (r.hog.accepted, r.hog.refused_cap, r.hog.refused_other),
        (4, 2, 0),
        "{h}"
    );
    assert_eq!((r.hog.without.count, r.hog.with.count), (3, 3), "{h}");
    // Besides the players (127.0.0.1), every abusive connection had an address of its own.
    assert!(r.source_addresses as u64 > r.floods.connections, "{h}");
}

#[test]
fn non_loopback_targets_are_refused() {
    assert!(caro_loadgen::sys::loopback("8.8.8.8:80").is_err());
}

/// The command line against a "cluster" as scripts/cluster runs it: the nodes' URLs in
/// $CARO_CLUSTER_URLS (the default of `--server`), and `--single` for the first node alone in
/// the same run; the summary has both and their ratios.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_loads_several_nodes_and_the_first_alone() {
    let s = server().await;
    let url = format!("http://{}", s.addr);
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_caro-loadgen"))
        .env("CARO_CLUSTER_URLS", format!("{url},{url}"))
        .args(["--single", "fanout"])
        .args([
            "--spectators",
            "4",
            "--moves",
            "6",
            "--interval-ms",
            "5",
            "--board",
            "15",
        ])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("caro-loadgen finished within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let summary = &v["summary"];
    assert_eq!(v["scenario"], "fanout", "{last}");
    // Four spectators, two a node, six moves: 24 deliveries, 12 a node; the first node alone
    // delivers the same 24.
    assert_eq!(summary["server"]["samples"], 24.0, "{last}");
    assert_eq!(summary["server"]["node0_samples"], 12.0, "{last}");
    assert_eq!(summary["server"]["node1_samples"], 12.0, "{last}");
    assert_eq!(summary["single"]["samples"], 24.0, "{last}");
    assert!(summary["single"].get("node0_samples").is_none(), "{last}");
    assert_eq!(summary["ratio_single"]["samples"], 1.0, "{last}");
}
