//! Cluster mode (issue 19, docs/scaling.md) with real server processes, one real PostgreSQL and
//! real Redis servers on loopback: `scripts/services` starts the shared ones, each test has a
//! database and a Redis namespace of its own, and the Redis-restart test runs a `redis-server`
//! of its own so it can kill it.
//!
//! Without `CARO_TEST_POSTGRES_URL` and `CARO_TEST_REDIS_URL` these tests say they are skipped
//! and pass, unless `CARO_REQUIRE_SERVICES=1` (scripts/test, CI): then they fail.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use caro_arena::store::postgres::testing::fresh_database;
use common::scripted::*;
use common::*;
use serde_json::{json, Value};

/// The lease the test clusters run with: short, so a failover is quick.
const LEASE_MS: u64 = 2000;

/// The Redis of `scripts/services`, or `None` (skipped) when there is none and none is required.
fn redis_url(test: &str) -> Option<String> {
    match std::env::var("CARO_TEST_REDIS_URL") {
        Ok(url) => Some(url),
        Err(_) if std::env::var("CARO_REQUIRE_SERVICES").as_deref() == Ok("1") => {
            panic!("{test}: CARO_TEST_REDIS_URL is not set but CARO_REQUIRE_SERVICES=1")
        }
        Err(_) => {
            eprintln!("{test}: SKIPPED, CARO_TEST_REDIS_URL is not set");
            None
        }
    }
}

/// A cluster's shared settings: database, Redis and namespace.
struct Cluster {
    pg: String,
    redis: String,
    namespace: String,
    dir: tempfile::TempDir,
}

impl Cluster {
    fn new(test: &str, redis: Option<String>) -> Option<Cluster> {
        let redis = match redis {
            Some(r) => r,
            None => redis_url(test)?,
        };
        let pg = fresh_database(test)?;
        let namespace = format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let dir = tempfile::tempdir().unwrap();
        Some(Cluster {
            pg,
            redis,
            namespace,
            dir,
        })
    }

    /// Node `id` of the cluster: the real binary, on a free port.
    fn node(&self, id: &str) -> (Proc, SocketAddr) {
        self.node_with(id, "")
    }

    /// Node `id` with `extra` appended to its config.
    fn node_with(&self, id: &str, extra: &str) -> (Proc, SocketAddr) {
        self.node_rooms(id, "grace_ms = 30000\nlobby_update_ms = 100", extra)
    }

    /// Node `id` with `rooms` as its `[rooms]` section and `extra` appended to its config.
    fn node_rooms(&self, id: &str, rooms: &str, extra: &str) -> (Proc, SocketAddr) {
        let dir = self.dir.path().join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("server.toml");
        std::fs::write(
            &cfg,
            format!(
                "[server]\nlog = \"warn\"\n[rooms]\n{rooms}\n\
                 [search]\nmin_move_ms = 0\n[store]\nurl = {:?}\n\
                 [cluster]\nredis_url = {:?}\nnode_id = {id:?}\nlease_ms = {LEASE_MS}\n\
                 namespace = {:?}\n{extra}",
                self.pg, self.redis, self.namespace
            ),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_caro-arena"))
            .arg("--config")
            .arg(&cfg)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The first line says where it listens; the log that follows goes on to stderr, each
        // line with the node's id (the harness shows it when a test fails).
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("the node exited").unwrap();
            match line.strip_prefix("listening on ") {
                Some(addr) => break addr.parse().unwrap(),
                None => eprintln!("[{id}] {line}"),
            }
        };
        let node = id.to_string();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("[{node}] {line}");
            }
        });
        (Proc(child), addr)
    }
}

/// A server process, killed (SIGKILL) when dropped, so a failing test leaves none behind.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kill(child: Proc) {
    drop(child);
}

/// A guest on `addr` registered as `username` (password "correct horse battery"): its
/// connection and player id.
async fn registered(addr: SocketAddr, username: &str) -> (Client, Value) {
    let (mut c, w) = hello_at(addr, "guest").await;
    let player_id = w["player_id"].clone();
    c.ask(
        json!({"type": "register", "id": 1, "username": username, "password": "correct horse battery"}),
        json!({"type": "logged_in", "re": 1, "player_id": player_id, "name": username}),
    )
    .await;
    (c, player_id)
}

/// alice on `a` creates a Caro room, bob on `b` joins it, carol on `c` watches: all set-up
/// messages read. Returns them, the room id and the players' `welcome`s.
async fn spread(
    a: SocketAddr,
    b: SocketAddr,
    c: SocketAddr,
) -> (Client, Client, Client, String, Value, Value) {
    let (mut alice, wa) = hello_at(a, "alice").await;
    let (mut bob, wb) = hello_at(b, "bob").await;
    let (mut carol, _) = hello_at(c, "carol").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "id": 1, "room_id": room}))
        .await;
    let joined = bob.recv().await;
    assert_eq!(
        (&joined["type"], &joined["you"]["seat"]),
        (&json!("room_joined"), &json!("o")),
        "{joined}"
    );
    assert_eq!(alice.recv().await["type"], "room_update");
    assert_eq!(bob.recv().await["type"], "room_update");
    carol
        .send(json!({"type": "join_room", "id": 2, "room_id": room, "as": "spectator"}))
        .await;
    let watching = carol.recv_skip(&["room_update"]).await;
    assert_eq!(watching["type"], "room_joined", "{watching}");
    assert_eq!(watching["you"]["role"], "spectator", "{watching}");
    (alice, bob, carol, room, wa, wb)
}

/// Plays moves `moves` of the script; carol sees each, in order, with its `seq`.
async fn play_watched(
    alice: &mut Client,
    bob: &mut Client,
    carol: &mut Client,
    room: &str,
    moves: std::ops::Range<usize>,
    seq_before: u64,
) {
    for (n, i) in moves.enumerate() {
        if i % 2 == 0 {
            play(alice, bob, room, i).await;
        } else {
            play(bob, alice, room, i).await;
        }
        let seen = carol.recv_skip(&["room_update"]).await;
        let (x, y) = script(i);
        assert_eq!(
            (&seen["type"], &seen["x"], &seen["y"], &seen["seq"]),
            (
                &json!("move"),
                &json!(x),
                &json!(y),
                &json!(seq_before + n as u64 + 1)
            ),
            "{seen}"
        );
    }
}

/// `/api/rooms` of `addr` once it lists `room` (the lobby crosses nodes within a feed tick or
/// two): the room's summary.
async fn listed(addr: SocketAddr, room: &str, moves: u64) -> Value {
    for _ in 0..100 {
        let (_, body) = http_get(addr, "/api/rooms").await;
        let list: Value = serde_json::from_str(&body).unwrap();
        let found = list["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["room_id"] == room && r["moves"] == moves)
            .cloned();
        if let Some(r) = found {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{addr} never listed room {room} at {moves} moves");
}

/// Waits for the server to close `c` with 1012 (its room moved: reconnect).
async fn moved_away(c: &mut Client) {
    for _ in 0..50 {
        match tokio::time::timeout(Duration::from_millis(200), c.closed()).await {
            Ok(Some(f)) => {
                assert_eq!(u16::from(f.code), 1012, "{f:?}");
                return;
            }
            Ok(None) => panic!("closed without a close frame"),
            Err(_) => continue,
        }
    }
    panic!("never closed");
}

#[tokio::test]
async fn a_room_made_on_a_is_played_from_b_watched_from_c_and_listed_on_all_three() {
    let Some(cluster) = Cluster::new("cluster_three_nodes", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (node_b, b) = cluster.node("b");
    let (node_c, c) = cluster.node("c");
    // dave watches the lobby on C.
    let (mut dave, _) = hello_at(c, "dave").await;
    dave.send(json!({"type": "watch_lobby", "id": 1})).await;
    assert_eq!(dave.recv().await["type"], "room_list");
    let (mut alice, mut bob, mut carol, room, wa, _) = spread(a, b, c).await;
    // ... and hears of the room made on A.
    let mut heard = false;
    for _ in 0..20 {
        let update = dave.recv().await;
        assert_eq!(update["type"], "lobby_update", "{update}");
        if update["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["room_id"] == room)
        {
            heard = true;
            break;
        }
    }
    assert!(heard, "C's lobby watcher never heard of the room made on A");
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..4, 0).await;
    // The lobby is the same on every node.
    let summaries = [
        listed(a, &room, 4).await,
        listed(b, &room, 4).await,
        listed(c, &room, 4).await,
    ];
    assert_eq!(
        summaries[0]["players"]["o"]["name"], "bob",
        "{}",
        summaries[0]
    );
    assert_eq!(summaries[0], summaries[1]);
    assert_eq!(summaries[1], summaries[2]);
    // alice's token, issued on A, resumes her seat on C.
    let (mut alice_c, back, joined) = resume(c, &token(&wa)).await;
    assert_eq!(back["player_id"], wa["player_id"], "{back}");
    assert_eq!(joined["you"]["seat"], "x", "{joined}");
    assert_eq!(joined["room"]["moves"], moves_json(4), "{joined}");
    // Her connection on A is closed as taken over, as on one node.
    let taken = alice.closed().await.expect("a close frame");
    assert_eq!(u16::from(taken.code), 4000, "{taken:?}");
    play_watched(&mut alice_c, &mut bob, &mut carol, &room, 4..9, 4).await;
    let over = carol.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&over["type"], &over["result"]),
        (&json!("game_over"), &json!("x")),
        "{over}"
    );
    for n in [node_a, node_b, node_c] {
        kill(n);
    }
}

#[tokio::test]
async fn kill_9_of_the_owner_moves_the_game_to_another_node_with_every_move() {
    let Some(cluster) = Cluster::new("cluster_kill_owner", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (node_b, b) = cluster.node("b");
    let (node_c, c) = cluster.node("c");
    let (alice, mut bob, mut carol, room, wa, wb) = spread(a, b, c).await;
    let mut alice = alice;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..5, 0).await;
    // SIGKILL of the room's node right after the fifth acknowledgement.
    kill(node_a);
    drop(alice);
    // B and C see the lease go, one of them takes the room, and both ask their members to
    // reconnect.
    moved_away(&mut bob).await;
    moved_away(&mut carol).await;
    let (mut bob, _, joined) = resume(b, &token(&wb)).await;
    assert_eq!(joined["room"]["moves"], moves_json(5), "{joined}");
    assert_eq!(joined["room"]["seq"], 5, "{joined}");
    let (mut alice, _, joined) = resume(c, &token(&wa)).await;
    assert_eq!(joined["room"]["moves"], moves_json(5), "{joined}");
    let (mut carol, _) = hello_at(c, "carol").await;
    carol
        .send(json!({"type": "join_room", "id": 3, "room_id": room, "as": "spectator"}))
        .await;
    let watching = carol.recv_skip(&["room_update"]).await;
    assert_eq!(watching["room"]["moves"], moves_json(5), "{watching}");
    bob.recv_skip(&[]).await; // room_update: alice is back
    play_watched(&mut alice, &mut bob, &mut carol, &room, 5..9, 5).await;
    let over = alice.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&over["type"], &over["seq"]),
        (&json!("game_over"), &json!(10)),
        "{over}"
    );
    let (_, body) = http_get(b, &format!("/api/games/{room}")).await;
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(game["moves"].as_array().unwrap().len(), 9, "{game}");
    kill(node_b);
    kill(node_c);
}

/// A `redis-server` of the test's own on `port` (no persistence).
fn redis_server(port: u16, dir: &std::path::Path) -> Proc {
    let mut child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "no", "--dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server (scripts/services installs it)");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Proc(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("redis-server did not start");
}

/// A `redis-server` of the test's own, on a free port, that the test can kill and start again.
struct OwnRedis {
    port: u16,
    dir: tempfile::TempDir,
}

impl OwnRedis {
    fn start(&self) -> Proc {
        redis_server(self.port, self.dir.path())
    }
}

/// A cluster on a Redis of the test's own, started: the cluster, that Redis and its process.
fn with_own_redis(test: &str) -> Option<(Cluster, OwnRedis, Proc)> {
    redis_url(test)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let own = OwnRedis {
        port,
        dir: tempfile::tempdir().unwrap(),
    };
    let cluster = Cluster::new(test, Some(format!("redis://127.0.0.1:{port}")))?;
    let redis = own.start();
    Some((cluster, own, redis))
}

#[tokio::test]
async fn a_redis_restart_mid_game_loses_no_acknowledged_move() {
    let Some((cluster, own, redis)) = with_own_redis("cluster_redis_restart") else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (node_b, b) = cluster.node("b");
    let (mut alice, mut bob, mut carol, room, _, wb) = spread(a, b, a).await;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..4, 0).await;
    kill(redis);
    // alice's move while Redis is down: the room's node commits and acknowledges it (bob on
    // the other node does not hear of it yet).
    play_local(&mut alice, &room, 4).await;
    let redis = own.start();
    // Back: B asks bob to reconnect, and he finds the move.
    moved_away(&mut bob).await;
    let (mut bob, _, joined) = resume(b, &token(&wb)).await;
    assert_eq!(joined["room"]["moves"], moves_json(5), "{joined}");
    alice.recv_skip(&[]).await; // room_update: bob is back
    play_moves(&mut alice, &mut bob, &room, 5..9).await;
    let over = alice.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&over["type"], &over["seq"]),
        (&json!("game_over"), &json!(10)),
        "{over}"
    );
    for n in [node_a, node_b] {
        kill(n);
    }
    kill(redis);
}

#[tokio::test]
async fn a_resume_while_redis_is_down_keeps_the_seat_and_asks_the_client_to_come_back() {
    let Some((cluster, own, redis)) = with_own_redis("cluster_resume_redis_down") else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (node_b, b) = cluster.node("b");
    let (mut alice, mut bob, mut carol, room, wa, _) = spread(a, b, a).await;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..4, 0).await;
    // The room's node dies, and Redis with it.
    kill(node_a);
    kill(redis);
    drop((alice, bob, carol));
    // alice resumes on B: her session is in the database, but where her room runs cannot be
    // read. She is welcomed, then asked to reconnect (1012); the seat is not given up.
    let mut c = connect(b).await;
    c.send(json!({"type": "hello", "token": token(&wa)})).await;
    let w = c.recv().await;
    assert_eq!(
        (&w["type"], &w["resumed"]),
        (&json!("welcome"), &json!(true)),
        "{w}"
    );
    let closed = c.closed().await.expect("a close frame");
    assert_eq!(u16::from(closed.code), 1012, "{closed:?}");
    // Redis back (empty: A's lease and heartbeat are gone). Her next tries find the room, taken
    // over by B, with its four moves; until B has reconnected to Redis they get 1012 again.
    let redis = own.start();
    let mut joined = None;
    'tries: for _ in 0..40 {
        let mut c = connect(b).await;
        c.send(json!({"type": "hello", "token": token(&wa)})).await;
        let w = c.recv().await;
        assert_eq!(
            (&w["type"], &w["resumed"]),
            (&json!("welcome"), &json!(true)),
            "{w}"
        );
        loop {
            match c.message_or_close().await {
                Ok(v) if v["type"] == "room_update" => continue,
                Ok(v) => {
                    joined = Some(v);
                    break 'tries;
                }
                Err(Some(f)) if u16::from(f.code) == 1012 => break,
                Err(f) => panic!("closed: {f:?}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let joined = joined.expect("the room within 40 tries");
    assert_eq!(
        (&joined["type"], &joined["room"]["moves"]),
        (&json!("room_joined"), &moves_json(4)),
        "{joined}"
    );
    kill(node_b);
    kill(redis);
}

#[tokio::test]
async fn a_room_stuck_on_its_commits_holds_up_no_other_room_of_its_node() {
    let Some(cluster) = Cluster::new("cluster_busy_room", None) else {
        return;
    };
    let no_rate = "[limits]\nrate_per_sec = 100000.0\nrate_burst = 100000\n";
    let (_node_a, a) = cluster.node_with("a", no_rate);
    let (_node_b, b) = cluster.node_with("b", no_rate);
    let (mut alice, mut bob, mut carol, room, _, _) = spread(a, b, a).await;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..2, 0).await;
    // A second room on A, made before the commits stop.
    let (_, other) = create(
        &mut carol,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    // The test holds the room's fence row: A's commits for the room (and its writer's batch)
    // wait, so after alice's next move the room waits for its commit and reads no command.
    let (mut db, conn) = tokio_postgres::connect(&cluster.pg, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let tx = db.transaction().await.unwrap();
    tx.query(
        "SELECT fence FROM room_owners WHERE room_id = $1 FOR UPDATE",
        &[&room],
    )
    .await
    .unwrap();
    let (x, y) = script(2);
    alice
        .send(json!({"type": "move", "id": 2, "room_id": room, "x": x, "y": y}))
        .await;
    // The move's commit waits for the row (A's writer waits on a lock in this database).
    let (watcher, conn) = tokio_postgres::connect(&cluster.pg, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut waiting = 0;
    for _ in 0..200 {
        waiting = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND datname = current_database()",
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0);
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(waiting > 0, "the move's commit never waited for the row");
    // bob, on B, sends the stuck room more commands than its queue holds (256).
    const SYNCS: u64 = 300;
    for i in 0..SYNCS {
        bob.send(json!({"type": "sync", "id": 1000 + i, "room_id": room, "since_seq": 2}))
            .await;
    }
    // Behind them in A's inbox (the same connection: B forwards its commands in order), bob
    // watching the other room is let in at once (before, A's inbox waited for the stuck room,
    // and the join ended in room_unavailable).
    bob.send(json!({"type": "join_room", "id": 1, "room_id": other, "as": "spectator"}))
        .await;
    let joined = bob.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&joined["type"], &joined["room"]["room_id"]),
        (&json!("room_joined"), &json!(other)),
        "{joined}"
    );
    // The commits go on: the move is acknowledged, and every command bob sent reaches the room,
    // in order.
    tx.commit().await.unwrap();
    let ack = alice.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&ack["type"], &ack["re"]),
        (&json!("move"), &json!(2)),
        "{ack}"
    );
    let mut seen = Vec::new();
    while (seen.len() as u64) < SYNCS {
        let v = bob.recv_skip(&["room_update", "move", "lobby"]).await;
        assert_eq!(v["type"], "synced", "{v}");
        seen.push(v["re"].as_u64().unwrap());
    }
    assert_eq!(seen, (1000..1000 + SYNCS).collect::<Vec<_>>());
}

/// Move `i` of the script by a player whose opponent is elsewhere: its acknowledgement.
async fn play_local(mover: &mut Client, room: &str, i: usize) {
    let (x, y) = script(i);
    mover
        .send(json!({"type": "move", "id": i, "room_id": room, "x": x, "y": y}))
        .await;
    let ack = mover.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&ack["type"], &ack["re"]),
        (&json!("move"), &json!(i)),
        "{ack}"
    );
}

#[tokio::test]
async fn logout_everywhere_on_one_node_closes_the_accounts_connections_on_the_others() {
    let Some(cluster) = Cluster::new("cluster_logout", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (mut ann, player_id) = registered(a, "Ann").await;
    // The account logs in on B too (a session of its own there).
    let (mut on_b, _) = hello_at(b, "x").await;
    on_b.send(
        json!({"type": "login", "id": 1, "username": "ann", "password": "correct horse battery"}),
    )
    .await;
    let v = on_b.recv().await;
    assert_eq!(
        (&v["type"], &v["player_id"]),
        (&json!("logged_in"), &player_id),
        "{v}"
    );
    let token = v["token"].as_str().unwrap().to_string();
    // A password changed on A holds on B at once: the old one no longer logs in there.
    ann.ask(
        json!({"type": "change_password", "id": 3, "old": "correct horse battery", "new": "a new password"}),
        json!({"type": "password_changed", "re": 3}),
    )
    .await;
    let (mut other, _) = hello_at(b, "y").await;
    other
        .ask(
            json!({"type": "login", "id": 1, "username": "Ann", "password": "correct horse battery"}),
            json!({"type": "error", "re": 1, "code": "bad_login", "message": "wrong username or password"}),
        )
        .await;
    other
        .send(json!({"type": "login", "id": 2, "username": "Ann", "password": "a new password"}))
        .await;
    assert_eq!(other.recv().await["type"], "logged_in");
    ann.ask(
        json!({"type": "logout_everywhere", "id": 2}),
        json!({"type": "logged_out", "re": 2}),
    )
    .await;
    let closed = on_b.closed().await.expect("a close frame");
    assert_eq!(u16::from(closed.code), 4001, "{closed:?}");
    // The token no longer resumes on B.
    let mut again = connect(b).await;
    again.send(json!({"type": "hello", "token": token})).await;
    let w = again.recv().await;
    assert_eq!(w["resumed"], false, "{w}");
}

#[tokio::test]
async fn one_username_registered_on_two_nodes_at_once_goes_to_one_of_them() {
    let Some(cluster) = Cluster::new("cluster_register_race", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (mut on_a, wa) = hello_at(a, "x").await;
    let (mut on_b, wb) = hello_at(b, "y").await;
    // Both at once: each node's look in the database finds the name free, then each hashes its
    // password (tens of milliseconds) before writing the account.
    let register = |password: &str| json!({"type": "register", "id": 1, "username": "Dana", "password": password});
    on_a.send(register("password of a")).await;
    on_b.send(register("password of b")).await;
    let (ra, rb) = (on_a.recv().await, on_b.recv().await);
    let taken = json!({"type": "error", "re": 1, "code": "username_taken",
        "message": "that username is taken"});
    let (winner, password, mut loser) = match (&ra["type"], &rb["type"]) {
        (w, _) if w == "logged_in" => {
            assert_eq!(rb, taken, "{ra} {rb}");
            (wa["player_id"].clone(), "password of a", on_b)
        }
        _ => {
            assert_eq!(ra, taken, "{ra} {rb}");
            assert_eq!(rb["type"], "logged_in", "{rb}");
            (wb["player_id"].clone(), "password of b", on_a)
        }
    };
    // The account is the winner's on both nodes, and only its password logs in.
    for node in [a, b] {
        let (mut c, _) = hello_at(node, "z").await;
        c.send(json!({"type": "login", "id": 1, "username": "dana", "password": password}))
            .await;
        let v = c.recv().await;
        assert_eq!(
            (&v["type"], &v["player_id"]),
            (&json!("logged_in"), &winner),
            "{v}"
        );
        let wrong = if password == "password of a" {
            "password of b"
        } else {
            "password of a"
        };
        c.ask(
            json!({"type": "login", "id": 2, "username": "Dana", "password": wrong}),
            json!({"type": "error", "re": 2, "code": "bad_login",
                "message": "wrong username or password"}),
        )
        .await;
    }
    // The loser is still a guest: it registers another name.
    loser
        .send(
            json!({"type": "register", "id": 2, "username": "Dana2", "password": "password of c"}),
        )
        .await;
    let v = loser.recv().await;
    assert_eq!(
        (&v["type"], &v["name"]),
        (&json!("logged_in"), &json!("Dana2")),
        "{v}"
    );
}

/// The next `move` event of `c` (other messages skipped), within a bound.
async fn next_move(c: &mut Client) -> Value {
    for _ in 0..20 {
        let m = c.recv().await;
        if m["type"] == "move" {
            return m;
        }
    }
    panic!("no move");
}

/// Alice on `addr` (her client and `welcome`) in a room against a bot (its id), after her
/// first move and the bot's reply.
async fn against_a_bot(addr: SocketAddr) -> (Client, Value, String) {
    let (mut alice, welcome) = hello_at(addr, "alice").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "beginner"}}),
    )
    .await;
    alice
        .send(json!({"type": "move", "id": 1, "room_id": room, "x": 7, "y": 7}))
        .await;
    next_move(&mut alice).await; // hers
    next_move(&mut alice).await; // the bot's reply, searched on this node
    (alice, welcome, room)
}

#[tokio::test]
async fn a_bot_whose_node_died_plays_on_from_its_new_owner() {
    let Some(cluster) = Cluster::new("cluster_bot_failover", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (alice, wa, room) = against_a_bot(a).await;
    kill(node_a);
    drop(alice);
    // B takes the room over when alice comes back there (or its sweep did already).
    let (mut alice, _, joined) = resume(b, &token(&wa)).await;
    assert_eq!(
        joined["room"]["moves"].as_array().unwrap().len(),
        2,
        "{joined}"
    );
    let taken: Vec<(i64, i64)> = joined["room"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m[0].as_i64().unwrap(), m[1].as_i64().unwrap()))
        .collect();
    let free = (0..15)
        .map(|x| (x, 0))
        .find(|c| !taken.contains(c))
        .unwrap();
    alice
        .send(json!({"type": "move", "id": 2, "room_id": room, "x": free.0, "y": free.1}))
        .await;
    let mine = next_move(&mut alice).await;
    assert_eq!(mine["re"], 2, "{mine}");
    // The bot searches on B now, and answers.
    let reply = next_move(&mut alice).await;
    assert_eq!(
        (&reply["seat"], &reply["seq"]),
        (&json!("o"), &json!(4)),
        "{reply}"
    );
}

/// Whether `addr`'s `/api/rooms` lists room `room` with `moves` moves.
async fn lists(addr: SocketAddr, room: &str, moves: u64) -> bool {
    let (_, body) = http_get(addr, "/api/rooms").await;
    let list: Value = serde_json::from_str(&body).unwrap();
    list["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["room_id"] == room && r["moves"] == moves)
}

/// How many `room_owners` rows room `room` has in the cluster's database.
async fn fence_rows(cluster: &Cluster, room: &str) -> i64 {
    let (db, conn) = tokio_postgres::connect(&cluster.pg, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    db.query_one(
        "SELECT COUNT(*) FROM room_owners WHERE room_id = $1",
        &[&room],
    )
    .await
    .unwrap()
    .get(0)
}

/// Waits until the session of `welcome` has its row in the cluster's database.
async fn session_stored(cluster: &Cluster, welcome: &Value) {
    let player = welcome["player_id"].as_str().unwrap();
    let stored = || async {
        let (db, conn) = tokio_postgres::connect(&cluster.pg, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let rows: i64 = db
            .query_one(
                "SELECT COUNT(*) FROM sessions WHERE player_id = $1",
                &[&player],
            )
            .await
            .unwrap()
            .get(0);
        rows == 1
    };
    until("the session never landed in the store", stored).await;
}

/// Polls `check` every 100 ms until it holds, up to 30 s (two leases for the sweep to look,
/// one more for the lease, and a loaded machine); panics with `what` otherwise.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    for _ in 0..300 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}");
}

/// Waits until room `room` has no `room_owners` row.
async fn fence_row_goes(cluster: &Cluster, room: &str) {
    let gone = || async { fence_rows(cluster, room).await == 0 };
    until(&format!("the fence row of room {room} stayed"), gone).await;
}

/// Regression: a room whose owner died before any other node heard of it (no lobby frame yet,
/// no player on another node) was taken over only when a player came back for it, and a
/// waiting room's fence row stayed for good. The sweep now finds both in the store.
#[tokio::test]
async fn the_rooms_of_a_dead_node_nobody_else_heard_of_are_swept_from_the_store() {
    let Some(cluster) = Cluster::new("cluster_unknown_rooms", None) else {
        return;
    };
    // A tells the lobby of its rooms only every ten minutes: B never hears of them.
    let (node_a, a) = cluster.node_rooms("a", "grace_ms = 30000\nlobby_update_ms = 600000", "");
    let (_node_b, b) = cluster.node("b");
    let (mut alice, wa, room) = against_a_bot(a).await;
    // And a room still waiting for its opponent: no game stored, only its fence row.
    let (_, waiting) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    assert!(
        !lists(b, &room, 2).await,
        "B heard of the room before A died"
    );
    // Its fence row lands in the background, a moment after alice hears of the room.
    let raised = || async { fence_rows(&cluster, &waiting).await == 1 };
    until("the waiting room's fence row never landed", raised).await;
    kill(node_a);
    drop(alice);
    // With nobody coming back for it, B's sweep finds the game in the store and takes it over.
    until(
        "B never took over the room of dead A that it had not heard of",
        || lists(b, &room, 2),
    )
    .await;
    // The waiting room is no game to restore: its fence row goes; the game keeps its.
    fence_row_goes(&cluster, &waiting).await;
    assert_eq!(fence_rows(&cluster, &room).await, 1);
    // Alice comes back through B and finds it.
    let (_alice, _, joined) = resume(b, &token(&wa)).await;
    assert_eq!(joined["room"]["room_id"], room.as_str(), "{joined}");
    assert_eq!(joined["room"]["moves"].as_array().unwrap().len(), 2);
}

/// Regression: a node kept a session it held with the seats it knew of when it met it (loaded at
/// its start, or adopted at an earlier resume): a game the player started on another node since
/// was not resumed through it (no `room_joined` for it; and a node started a moment after a
/// session was stored, before its game was, held it seatless). Every resume in a cluster now
/// takes the seats the store has for the session.
#[tokio::test]
async fn a_resume_finds_the_games_started_on_other_nodes_since_the_node_met_the_session() {
    let Some(cluster) = Cluster::new("cluster_seats_since", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (alice, wa, first) = against_a_bot(a).await;
    drop(alice);
    // B meets her session: her game on A, from the store.
    let (on_b, _, joined) = resume(b, &token(&wa)).await;
    assert_eq!(joined["room"]["room_id"], first.as_str(), "{joined}");
    drop(on_b);
    // Back on A, she starts a second game; her first move is acknowledged once stored.
    let (mut alice, _, _) = resume(a, &token(&wa)).await;
    alice
        .send(json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "beginner"}}))
        .await;
    let made = alice.recv_skip(&["room_update"]).await;
    assert_eq!(made["type"], "room_joined", "{made}");
    let second = made["room"]["room_id"].as_str().unwrap().to_string();
    alice
        .send(json!({"type": "move", "id": 7, "room_id": second, "x": 7, "y": 7}))
        .await;
    assert_eq!(next_move(&mut alice).await["re"], 7);
    drop(alice);
    // Through B again: both games.
    let (mut on_b, _, one) = resume(b, &token(&wa)).await;
    let other = on_b.recv_skip(&["room_update"]).await;
    assert_eq!(other["type"], "room_joined", "{other}");
    let mut rooms = [
        one["room"]["room_id"].as_str().unwrap(),
        other["room"]["room_id"].as_str().unwrap(),
    ];
    rooms.sort();
    let mut expected = [first.as_str(), second.as_str()];
    expected.sort();
    assert_eq!(rooms, expected);
}

/// Regression: a node restarted with the same id (a heartbeat again, so not a dead node) left
/// its former process's waiting rooms' fence rows for good.
#[tokio::test]
async fn a_node_restarted_under_its_id_lets_its_former_waiting_rooms_go() {
    let Some(cluster) = Cluster::new("cluster_restarted_node", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (mut alice, _) = hello_at(a, "alice").await;
    let (_, waiting) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    // The fence is raised in the background (a room waiting for its opponent commits nothing
    // else): its row lands a moment after the creator hears of the room.
    let raised = || async { fence_rows(&cluster, &waiting).await == 1 };
    until("the waiting room's fence row never landed", raised).await;
    kill(node_a);
    drop(alice);
    let (_node_a, _) = cluster.node("a");
    fence_row_goes(&cluster, &waiting).await;
}

/// Regression: while a new room waited for Redis to take its lease and note it for its
/// creator's caps, it did not count against `limits.max_rooms` (it was not in the node's map
/// yet), so creations racing it all passed.
#[tokio::test]
async fn a_room_waiting_for_redis_counts_against_max_rooms() {
    let Some((cluster, _own, redis)) = with_own_redis("cluster_max_rooms_wait") else {
        return;
    };
    let (_node_a, a) = cluster.node_with("a", "[limits]\nmax_rooms = 1\n");
    let (mut alice, _) = hello_at(a, "alice").await;
    let (mut bob, _) = hello_at(a, "bob").await;
    // Redis paused: each command of the node waits for its 500 ms response timeout.
    signal(&redis, "-STOP");
    let open =
        |id: u64| json!({"type": "create_room", "id": id, "game": "caro", "x": "me", "o": "open"});
    alice.send(open(1)).await;
    bob.send(open(2)).await;
    let answers = [
        alice.recv_skip(&["room_update"]).await,
        bob.recv_skip(&["room_update"]).await,
    ];
    signal(&redis, "-CONT");
    // One of them (whichever the node claimed first) has the one room; the other is refused.
    let kinds: Vec<(&Value, &Value)> = answers.iter().map(|a| (&a["type"], &a["code"])).collect();
    let joined = (&json!("room_joined"), &Value::Null);
    let refused = (&json!("error"), &json!("too_many_rooms"));
    assert!(
        kinds == [joined, refused] || kinds == [refused, joined],
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_players_room_cap_counts_its_rooms_on_every_node() {
    let Some(cluster) = Cluster::new("cluster_caps", None) else {
        return;
    };
    let caps = "[limits]\nrooms_per_player = 2\n";
    let (_node_a, a) = cluster.node_with("a", caps);
    let (_node_b, b) = cluster.node_with("b", caps);
    let open = json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"});
    let (mut on_a, w) = hello_at(a, "alice").await;
    create(&mut on_a, open.clone()).await;
    // Her session is written in the background as she takes the seat: B finds it once stored.
    session_stored(&cluster, &w).await;
    // The same player on B: one room there, then the cap (one here, one on A).
    let (mut on_b, _) = (connect(b).await, ());
    on_b.send(json!({"type": "hello", "token": token(&w)}))
        .await;
    let welcome = on_b.recv_skip(&["room_joined", "room_update"]).await;
    assert_eq!(
        (&welcome["type"], &welcome["resumed"]),
        (&json!("welcome"), &json!(true)),
        "{welcome}"
    );
    create(&mut on_b, open.clone()).await;
    on_b.send(json!({"type": "create_room", "id": 9, "game": "caro", "x": "me", "o": "open"}))
        .await;
    let refused = on_b.recv_skip(&["room_joined", "room_update"]).await;
    assert_eq!(
        (&refused["code"], &refused["re"]),
        (&json!("too_many_rooms_for_player"), &json!(9)),
        "{refused}"
    );
}

#[tokio::test]
async fn a_player_whose_node_died_is_away_for_the_room() {
    let Some(cluster) = Cluster::new("cluster_node_gone", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (node_b, b) = cluster.node("b");
    let (mut alice, _) = hello_at(a, "alice").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    let (mut bob, _) = hello_at(b, "bob").await;
    bob.send(json!({"type": "join_room", "id": 1, "room_id": room}))
        .await;
    assert_eq!(bob.recv().await["type"], "room_joined");
    assert_eq!(alice.recv().await["type"], "room_update");
    // bob's node dies: the room hears that he is away (his grace starts) within a lease or two.
    kill(node_b);
    let mut away = None;
    for _ in 0..10 {
        let update = alice.recv().await;
        if update["type"] == "room_update" && update["players"]["o"]["connected"] == false {
            away = Some(update);
            break;
        }
    }
    let away = away.expect("bob never shown away");
    assert!(
        away["players"]["o"]["abandon_ms"].as_u64().is_some(),
        "{away}"
    );
}

#[tokio::test]
async fn a_rated_game_on_one_node_moves_the_rating_every_node_shows() {
    let Some(cluster) = Cluster::new("cluster_ratings", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (mut ann, _) = registered(a, "Ann").await;
    let (_, room) = create(
        &mut ann,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "beginner"}}),
    )
    .await;
    for (i, (x, y)) in [(7, 7), (0, 0)].into_iter().enumerate() {
        ann.send(json!({"type": "move", "id": i + 2, "room_id": room, "x": x, "y": y}))
            .await;
        next_move(&mut ann).await; // hers
        next_move(&mut ann).await; // the bot's
    }
    ann.send(json!({"type": "resign", "id": 9, "room_id": room}))
        .await;
    let over = loop {
        let m = ann.recv().await;
        if m["type"] == "game_over" {
            break m;
        }
    };
    let after = over["ratings"]["x"]["after"].clone();
    assert!(after.as_i64().is_some(), "a rated game: {over}");
    // B shows the new rating (its book heard of the game), though the account is A's.
    let mut shown = Value::Null;
    for _ in 0..50 {
        let (status, body) = http_get(b, "/api/players/Ann").await;
        assert!(status.contains("200"), "{status} {body}");
        let p: Value = serde_json::from_str(&body).unwrap();
        shown = p["ratings"][0].clone();
        if shown["games"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        (&shown["games"], &shown["rating"], &shown["losses"]),
        (&json!(1), &after, &json!(1)),
        "{shown}"
    );
}

/// A `seek` of `c`, sent again while its node does not yet know who pairs (its first lease
/// round, right after start: `room_unavailable`), within a bound.
async fn seek(c: &mut Client, id: u64) {
    for _ in 0..50 {
        c.send(json!({"type": "seek", "id": id, "game": "caro"}))
            .await;
        let r = c.recv().await;
        if r["code"] == "room_unavailable" {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        assert_eq!(
            (&r["type"], &r["re"]),
            (&json!("seeking"), &json!(id)),
            "{r}"
        );
        return;
    }
    panic!("the pairing node never became known");
}

/// Waits until `c`'s node knows who pairs: a `cancel_seek` (harmless without a seek) is then
/// answered `seek_cancelled`, not `room_unavailable`.
async fn wait_for_pairing_node(c: &mut Client) {
    for _ in 0..50 {
        c.send(json!({"type": "cancel_seek", "id": 99})).await;
        if c.recv().await["type"] == "seek_cancelled" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the pairing node never became known");
}

#[tokio::test]
async fn seekers_on_different_nodes_are_paired() {
    let Some(cluster) = Cluster::new("cluster_pairing", None) else {
        return;
    };
    let (_node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (mut dave, _) = hello_at(b, "dave").await;
    dave.send(json!({"type": "watch_lobby", "id": 1})).await;
    assert_eq!(dave.recv().await["type"], "room_list");
    let (mut ann, _) = hello_at(a, "ann").await;
    seek(&mut ann, 1).await;
    // B's lobby watcher sees the seek, wherever the pairing node is.
    let seeks = dave.recv_skip(&["lobby_update"]).await;
    assert_eq!(seeks["type"], "seeks", "{seeks}");
    assert_eq!(seeks["seeks"][0]["name"], "ann", "{seeks}");
    let (mut bob, _) = hello_at(b, "bob").await;
    // bob's seek pairs at once: no `seeking`, `paired` (below).
    wait_for_pairing_node(&mut bob).await;
    bob.send(json!({"type": "seek", "id": 2, "game": "caro"}))
        .await;
    let mut seats = Vec::new();
    for c in [&mut ann, &mut bob] {
        let paired = c.recv().await;
        assert_eq!(paired["type"], "paired", "{paired}");
        c.send(json!({"type": "join_room", "id": 3, "room_id": paired["room_id"]}))
            .await;
        let joined = c.recv_skip(&["room_update"]).await;
        assert_eq!(joined["type"], "room_joined", "{joined}");
        seats.push(joined["you"]["seat"].clone());
    }
    seats.sort_by_key(|s| s.to_string());
    assert_eq!(seats, [json!("o"), json!("x")]);
    // A seek cancelled on either node (one of them is not the pairing node, which answers
    // for it) is answered with its id, and leaves the list.
    for (node, name) in [(a, "eve"), (b, "fay")] {
        let (mut c, _) = hello_at(node, name).await;
        seek(&mut c, 4).await;
        seeks_become(&mut dave, |seeks| {
            seeks.len() == 1 && seeks[0]["name"] == name
        })
        .await;
        c.ask(
            json!({"type": "cancel_seek", "id": 5}),
            json!({"type": "seek_cancelled", "re": 5}),
        )
        .await;
        seeks_become(&mut dave, |seeks| seeks.is_empty()).await;
    }
}

/// Reads lobby watcher `c`'s messages until a `seeks` list passes `check` (at most 20).
async fn seeks_become(c: &mut Client, check: impl Fn(&Vec<Value>) -> bool) {
    for _ in 0..20 {
        let v = c.recv().await;
        if v["type"] == "seeks" && check(v["seeks"].as_array().unwrap()) {
            return;
        }
    }
    panic!("the seeks list never became as expected");
}

#[tokio::test]
async fn a_node_stopped_gracefully_hands_its_games_over() {
    let Some(cluster) = Cluster::new("cluster_graceful_stop", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (_node_c, c) = cluster.node("c");
    let (mut alice, mut bob, mut carol, room, wa, wb) = spread(a, b, c).await;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..3, 0).await;
    // SIGTERM, as a deploy stops a node: it shuts down cleanly (its rooms stop quietly).
    let stopped = Command::new("kill")
        .args(["-TERM", &node_a.0.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let away = alice.closed().await.expect("a close frame");
    assert_eq!(u16::from(away.code), 1001, "{away:?}");
    moved_away(&mut bob).await;
    let (mut bob, _, joined) = resume(b, &token(&wb)).await;
    assert_eq!(joined["room"]["moves"], moves_json(3), "{joined}");
    let (mut alice, _, joined) = resume(c, &token(&wa)).await;
    assert_eq!(joined["room"]["moves"], moves_json(3), "{joined}");
    bob.recv_skip(&[]).await; // room_update: alice is back
    play_moves(&mut alice, &mut bob, &room, 3..9).await;
    let over = alice.recv_skip(&["room_update"]).await;
    assert_eq!(over["type"], "game_over", "{over}");
    drop(node_a);
}

fn signal(node: &Proc, sig: &str) {
    let done = Command::new("kill")
        .args([sig, &node.0.id().to_string()])
        .status()
        .unwrap();
    assert!(done.success());
}

#[tokio::test]
async fn an_owner_paused_past_its_lease_stops_its_copy_when_it_wakes() {
    let Some(cluster) = Cluster::new("cluster_paused_owner", None) else {
        return;
    };
    let (node_a, a) = cluster.node("a");
    let (_node_b, b) = cluster.node("b");
    let (_node_c, c) = cluster.node("c");
    let (mut alice, mut bob, mut carol, room, wa, wb) = spread(a, b, c).await;
    play_watched(&mut alice, &mut bob, &mut carol, &room, 0..3, 0).await;
    // A stops (a long GC pause, a stalled disk): B or C takes the room over.
    signal(&node_a, "-STOP");
    moved_away(&mut bob).await;
    let (mut bob, _, joined) = resume(b, &token(&wb)).await;
    assert_eq!(joined["room"]["moves"], moves_json(3), "{joined}");
    // A wakes up: its stale copy stops at its next lease round, and alice reconnects too.
    signal(&node_a, "-CONT");
    moved_away(&mut alice).await;
    let (mut alice, _, joined) = resume(c, &token(&wa)).await;
    assert_eq!(joined["room"]["moves"], moves_json(3), "{joined}");
    bob.recv_skip(&[]).await; // room_update: alice is back
    play_moves(&mut alice, &mut bob, &room, 3..9).await;
    let over = alice.recv_skip(&["room_update"]).await;
    assert_eq!(
        (&over["type"], &over["seq"]),
        (&json!("game_over"), &json!(10)),
        "{over}"
    );
}
