//! A bystander's bot reply time while one player hogs the search slots (issue 16, item 6):
//! the measurement behind "Search slots" in docs/bots.md.
//!
//! Against a running server: `cargo run --example bot_bystander -- <addr> <hog games> <replies>`.
//! The hog opens `<hog games>` games against `master` on one connection and answers every bot
//! move at once (a finished game is replaced), so it always has searches waiting; after 5 s a
//! second player plays `beginner` and times each of `<replies>` bot replies, from sending its
//! move to the bot's move arriving. With 0 hog games it measures the unloaded reply. The
//! server's `limits.*_per_player` caps must allow the hog's games.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: &str, name: &str) -> Ws {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("connect");
    send(&mut ws, json!({"type": "hello", "name": name})).await;
    ws
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

async fn recv(ws: &mut Ws) -> Value {
    loop {
        match ws.next().await.expect("open").expect("frame") {
            Message::Text(t) => return serde_json::from_str(t.as_str()).expect("json"),
            Message::Close(f) => panic!("closed: {f:?}"),
            _ => {}
        }
    }
}

/// The first free cell in reading order from row `from_row` (wrapping), on 15x15.
fn free(taken: &HashSet<(u64, u64)>, from_row: u64) -> (u64, u64) {
    (0..15)
        .map(|r| (from_row + r) % 15)
        .flat_map(|y| (0..15).map(move |x| (x, y)))
        .find(|c| !taken.contains(c))
        .expect("a free cell")
}

fn create(level: &str) -> Value {
    json!({"type": "create_room", "game": "caro", "width": 15, "x": "me", "o": {"bot": level}})
}

/// Plays the hog's games forever.
async fn hog(addr: String, games: usize) {
    let mut ws = connect(&addr, "hog").await;
    let mut rooms: HashMap<String, HashSet<(u64, u64)>> = HashMap::new();
    for _ in 0..games {
        send(&mut ws, create("master")).await;
    }
    loop {
        let v = recv(&mut ws).await;
        match v["type"].as_str() {
            Some("room_joined") => {
                let id = v["room"]["room_id"].as_str().unwrap().to_string();
                let cell = free(&HashSet::new(), 0);
                rooms.insert(id.clone(), HashSet::from([cell]));
                send(
                    &mut ws,
                    json!({"type": "move", "room_id": id, "x": cell.0, "y": cell.1}),
                )
                .await;
            }
            Some("move") if v["seat"] == "o" && v["turn"] == "x" => {
                let id = v["room_id"].as_str().unwrap().to_string();
                let taken = rooms.entry(id.clone()).or_default();
                taken.insert((v["x"].as_u64().unwrap(), v["y"].as_u64().unwrap()));
                let cell = free(taken, 0);
                taken.insert(cell);
                send(
                    &mut ws,
                    json!({"type": "move", "room_id": id, "x": cell.0, "y": cell.1}),
                )
                .await;
            }
            Some("game_over") => {
                rooms.remove(v["room_id"].as_str().unwrap());
                send(&mut ws, create("master")).await;
            }
            Some("error") => panic!("hog: {v}"),
            _ => {}
        }
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let games: usize = args.get(2).map_or(30, |a| a.parse().expect("hog games"));
    let replies: usize = args.get(3).map_or(20, |a| a.parse().expect("replies"));
    if games > 0 {
        tokio::spawn(hog(addr.clone(), games));
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let mut ws = connect(&addr, "bystander").await;
    let mut took = Vec::new();
    'games: while took.len() < replies {
        send(&mut ws, create("beginner")).await;
        let room = loop {
            let v = recv(&mut ws).await;
            if v["type"] == "room_joined" {
                break v["room"]["room_id"].as_str().unwrap().to_string();
            }
        };
        let mut taken = HashSet::new();
        while took.len() < replies {
            let cell = free(&taken, 7);
            taken.insert(cell);
            send(
                &mut ws,
                json!({"type": "move", "room_id": room, "x": cell.0, "y": cell.1}),
            )
            .await;
            let t = Instant::now();
            loop {
                let v = recv(&mut ws).await;
                match v["type"].as_str() {
                    Some("move") if v["seat"] == "o" => {
                        took.push(t.elapsed());
                        taken.insert((v["x"].as_u64().unwrap(), v["y"].as_u64().unwrap()));
                        if v["turn"].is_null() {
                            continue 'games;
                        }
                        break;
                    }
                    Some("game_over") => continue 'games,
                    Some("error") => panic!("bystander: {v}"),
                    _ => {}
                }
            }
        }
    }
    took.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "hog games {games}: {} beginner replies, median {:.0} ms, p90 {:.0} ms, max {:.0} ms",
        took.len(),
        ms(took[took.len() / 2]),
        ms(took[took.len() * 9 / 10]),
        ms(took[took.len() - 1]),
    );
}
