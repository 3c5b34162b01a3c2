//! Test harness: starts the real server in-process on port 0 (`run_with_store`) and talks to it
//! over real sockets with a JSON WebSocket client.
#![allow(dead_code)]

pub mod fake;
pub mod rated;
pub mod scripted;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use caro_arena::config::Config;
use caro_arena::store::{MemoryStore, Store};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for a message it expects.
pub const WAIT: Duration = Duration::from_secs(10);

/// Short timings and fast bots so the suite stays quick. Each argument adds keys to its table;
/// a key given there replaces the test default.
pub fn config_with(server: &str, limits: &str, rooms: &str, search: &str) -> Config {
    Config::from_toml(&config_text(server, limits, rooms, search)).expect("test config")
}

/// The test configuration with `search` keys and more `[bots.<name>]` tables (outside
/// engines), which must be valid.
pub fn config_with_bots(search: &str, bots: &str) -> Config {
    let text = format!("{}\n{bots}", config_text("", "", "", search));
    Config::from_toml(&text).unwrap_or_else(|e| panic!("test config: {e}\n{bots}"))
}

/// The text of [`config_with`].
pub fn config_text(server: &str, limits: &str, rooms: &str, search: &str) -> String {
    let with = |given: &str, defaults: &[&str]| {
        let key = |line: &str| line.split('=').next().unwrap_or("").trim().to_string();
        let given_keys: Vec<String> = given.lines().map(key).collect();
        let mut out = given.to_string();
        for d in defaults {
            if !given_keys.contains(&key(d)) {
                out.push('\n');
                out.push_str(d);
            }
        }
        out
    };
    // Off unless a test sets them: every test client comes from 127.0.0.1 (tests/abuse_edge.rs
    // tests the per-address caps) and tests open many rooms from one player (tests/abuse_caps.rs
    // sets the per-player caps).
    let limits = with(
        limits,
        &[
            "rate_per_sec = 1000.0",
            "rate_burst = 1000",
            "max_connections_per_ip = 0",
            "upgrades_per_ip_per_sec = 0.0",
            "rooms_per_player = 1000",
            "bot_rooms_per_player = 1000",
            "bot_games_per_player = 1000",
        ],
    );
    let rooms = with(rooms, &["crowd_update_ms = 0"]);
    let search = with(
        search,
        &[
            "max_concurrent = 2",
            "thinking_interval_ms = 0",
            "min_move_ms = 0",
        ],
    );
    format!(
        r#"
[server]
log = "warn"
shutdown_timeout_ms = 5000
{server}

[limits]
{limits}

[rooms]
{rooms}

[search]
{search}

[bots.quick]
description = "Fast test bot"
games = ["caro", "tictactoe"]
max_depth = 2
time_ms = 50

[bots.strong]
description = "Full-strength test bot"
games = ["caro", "tictactoe"]
max_depth = 8
time_ms = 300

[bots.classic]
description = "Caro only"
games = ["caro"]
style = "classic"
max_depth = 2
time_ms = 50
"#
    )
}

/// The default test configuration.
pub fn config() -> Config {
    config_with("", "", "", "")
}

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The memory store of [`start`] (unused by [`start_with_store`]).
    pub store: Arc<MemoryStore>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

/// Starts a server on 127.0.0.1:0.
pub async fn start(config: Config) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(MemoryStore::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(caro_arena::run_with_store(
        listener,
        config,
        store.clone(),
        async {
            let _ = stopped.await;
        },
    ));
    TestServer {
        addr,
        store,
        stop: Some(stop),
        task: Some(task),
    }
}

/// Starts a server on 127.0.0.1:0 with `store` (a real database in persistence tests).
pub async fn start_with_store(config: Config, store: Arc<dyn Store>) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(caro_arena::run_with_store(listener, config, store, async {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        store: Arc::new(MemoryStore::default()),
        stop: Some(stop),
        task: Some(task),
    }
}

/// A WebSocket client of the server at `addr`, before hello.
pub async fn connect(addr: SocketAddr) -> Client {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("connect");
    Client { ws }
}

/// A client of the server at `addr` after `hello` as `name`; returns it and the `welcome`.
pub async fn hello_at(addr: SocketAddr, name: &str) -> (Client, Value) {
    greet(connect(addr).await, name).await
}

/// A TCP connection to `addr` from `from` (port chosen by the system): 127.0.0.2 and up are a
/// second client address on Linux's loopback.
pub async fn connect_from(from: std::net::IpAddr, addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket.connect(addr).await.unwrap()
}

/// [`hello_at`] from the address `from` (see [`connect_from`]).
pub async fn hello_from(from: std::net::IpAddr, addr: SocketAddr, name: &str) -> (Client, Value) {
    let tcp = connect_from(from, addr).await;
    let (ws, _) =
        tokio_tungstenite::client_async(format!("ws://{addr}/ws"), MaybeTlsStream::Plain(tcp))
            .await
            .expect("connect");
    greet(Client { ws }, name).await
}

/// Sends `hello` as `name` and reads the `welcome`.
async fn greet(mut c: Client, name: &str) -> (Client, Value) {
    c.send(json!({"type": "hello", "name": name})).await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    (c, w)
}

/// A raw HTTP GET to `addr`: (whole response head, body).
pub async fn http_get(addr: SocketAddr, path: &str) -> (String, String) {
    use tokio::io::AsyncWriteExt;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_response(s).await
}

/// Reads an HTTP response to the end of the connection: (whole head, body).
pub async fn read_response(mut s: TcpStream) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    tokio::time::timeout(WAIT, s.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8(buf).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

impl TestServer {
    /// A connected WebSocket client that has not said hello.
    pub async fn connect(&self) -> Client {
        connect(self.addr).await
    }

    /// A client after `hello`; returns it and the `welcome`.
    pub async fn hello(&self, name: &str) -> (Client, Value) {
        hello_at(self.addr, name).await
    }

    /// Signals shutdown and waits for `run` to return; panics if it fails or hangs.
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        let r = tokio::time::timeout(WAIT, self.task.take().unwrap())
            .await
            .expect("server stops in time")
            .expect("server task");
        r.expect("run returns Ok");
    }

    /// A raw HTTP GET: (status line, body).
    pub async fn get(&self, path: &str) -> (String, String) {
        let (head, body) = self.get_raw(path).await;
        (head.lines().next().unwrap().to_string(), body)
    }

    /// The value of one unlabelled metric of `/metrics` (`name` without its `caro_` prefix).
    pub async fn metric(&self, name: &str) -> u64 {
        let (_, body) = self.get("/metrics").await;
        let prefix = format!("caro_{name} ");
        body.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no caro_{name} in {body}"))
            .parse()
            .unwrap()
    }

    /// A raw HTTP GET: (whole response head, body).
    pub async fn get_raw(&self, path: &str) -> (String, String) {
        http_get(self.addr, path).await
    }
}

/// A JSON WebSocket client.
pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Client {
    pub async fn send(&mut self, v: Value) {
        self.send_text(&v.to_string()).await;
    }

    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.to_string().into()))
            .await
            .expect("send");
    }

    /// The next JSON message (pings and pongs skipped). Panics on close or timeout.
    pub async fn recv(&mut self) -> Value {
        loop {
            let m = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("timed out waiting for a message")
                .expect("stream ended")
                .expect("websocket error");
            match m {
                Message::Text(t) => return serde_json::from_str(t.as_str()).expect("json"),
                Message::Close(f) => panic!("closed: {f:?}"),
                _ => {}
            }
        }
    }

    /// The next message whose type is not in `skip`.
    pub async fn recv_skip(&mut self, skip: &[&str]) -> Value {
        loop {
            let v = self.recv().await;
            if !skip.iter().any(|s| v["type"] == *s) {
                return v;
            }
        }
    }

    /// The next message, skipping `bot_thinking` and `room_update`.
    pub async fn event(&mut self) -> Value {
        self.recv_skip(&["bot_thinking", "room_update"]).await
    }

    /// Asserts the next message equals `expected`.
    pub async fn expect(&mut self, expected: Value) {
        let got = self.recv().await;
        assert_eq!(got, expected);
    }

    /// Asserts the next message equals `expected` once its away players' abandonment countdowns
    /// (`abandon_ms`, which real time makes inexact here) are taken out; each must be in
    /// `1..=at_most` ms. Returns them, X then O (tests/clock.rs checks them exactly).
    pub async fn expect_away(&mut self, expected: Value, at_most: u64) -> [Option<u64>; 2] {
        let mut got = self.recv().await;
        let away = take_countdowns(&mut got);
        for ms in away.into_iter().flatten() {
            assert!((1..=at_most).contains(&ms), "abandon_ms {ms} in {got}");
        }
        assert_eq!(got, expected);
        away
    }

    /// Sends and expects an exact reply.
    pub async fn ask(&mut self, msg: Value, expected: Value) {
        self.send(msg).await;
        self.expect(expected).await;
    }

    /// The next message, or the close frame (`Err(None)`: the stream ended without one).
    pub async fn message_or_close(&mut self) -> Result<Value, Option<CloseFrame>> {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("timed out waiting for a message or a close")
            {
                Some(Ok(Message::Text(t))) => {
                    return Ok(serde_json::from_str(t.as_str()).expect("json"))
                }
                Some(Ok(Message::Close(f))) => return Err(f),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Err(None),
            }
        }
    }

    /// Waits for the close frame (skipping other messages); `None` if the stream ends without one.
    pub async fn closed(&mut self) -> Option<CloseFrame> {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("timed out waiting for close")
            {
                Some(Ok(Message::Close(f))) => return f,
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// Asserts nothing but pings/pongs arrives within `d`.
    pub async fn quiet(&mut self, d: Duration) {
        let deadline = tokio::time::Instant::now() + d;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => return,
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => {}
                Ok(other) => panic!("expected silence, got {other:?}"),
            }
        }
    }
}

/// Takes the `abandon_ms` countdowns out of a `room_update` or `room_joined`, X then O.
pub fn take_countdowns(v: &mut Value) -> [Option<u64>; 2] {
    let players = if v.get("room").is_some() {
        &mut v["room"]["players"]
    } else {
        &mut v["players"]
    };
    ["x", "o"].map(|s| {
        players
            .get_mut(s)
            .and_then(Value::as_object_mut)
            .and_then(|p| p.remove("abandon_ms"))
            .and_then(|ms| ms.as_u64())
    })
}

/// alice (X) and bob (O) playing Caro in a new room, carol watching; every setup message read
/// (the seat and crowd updates, however many the room sent, up to a `pong`).
pub async fn two_players_and_a_spectator(server: &TestServer) -> (Client, Client, Client, String) {
    let (mut alice, _) = server.hello("alice").await;
    let (mut bob, _) = server.hello("bob").await;
    let (mut carol, _) = server.hello("carol").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(bob.recv().await["type"], "room_joined");
    carol
        .send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    assert_eq!(carol.recv().await["type"], "room_joined");
    for c in [&mut alice, &mut bob, &mut carol] {
        c.send(json!({"type": "ping", "id": "sync"})).await;
        let pong = c.recv_skip(&["room_update"]).await;
        assert_eq!(pong, json!({"type": "pong", "re": "sync"}));
    }
    (alice, bob, carol, room)
}

/// Creates a room and returns (room_joined message, room id).
pub async fn create(c: &mut Client, msg: Value) -> (Value, String) {
    c.send(msg).await;
    let v = c.recv().await;
    assert_eq!(v["type"], "room_joined", "{v}");
    let id = v["room"]["room_id"].as_str().unwrap().to_string();
    (v, id)
}

pub fn human(name: &str, connected: bool) -> Value {
    json!({"name": name, "kind": "human", "connected": connected})
}

pub fn bot(level: &str) -> Value {
    json!({"name": level, "kind": "bot", "bot": level, "connected": true})
}

/// The real server binary with the configuration `config_text` (written into `dir`), on a free
/// port; returns the process and its address, read from its `listening on` line.
pub fn spawn_binary(dir: &std::path::Path, config_text: &str) -> (std::process::Child, SocketAddr) {
    use std::io::{BufRead, BufReader};
    let cfg = dir.join("server.toml");
    std::fs::write(&cfg, config_text).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_caro-arena"))
        .arg("--config")
        .arg(&cfg)
        .args(["--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

/// A SQLite file at `path` as a server of schema `version` left it: the first `version`
/// migrations applied and `user_version` set; the caller adds its rows, then opens it with the
/// current store to watch it migrate.
pub fn database_at_version(path: &std::path::Path, version: usize) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    for sql in &caro_arena::store::sqlite::MIGRATIONS[..version] {
        conn.execute_batch(sql).unwrap();
    }
    conn.pragma_update(None, "user_version", version as u32)
        .unwrap();
    conn
}
