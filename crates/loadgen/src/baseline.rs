//! The baseline: the thinnest server on the same stack (tokio + tokio-tungstenite) that the
//! generator's scenarios can run against, kept as the measure of what the stack itself costs on
//! this machine. A room is a list of sockets; every frame that is not one of the few setup
//! messages is relayed, as the same shared bytes, to every socket of the sender's room (the
//! sender included, which is its acknowledgement). No game logic, no JSON parsing on the relay
//! path: a frame is a setup message only if it starts with one of the setup prefixes the
//! generator writes (`{"type":"hello"`, ...).
//!
//! Like the server, each connection is a reader task and a writer task draining a bounded queue,
//! a client whose queue is full is dropped, and the WebSocket buffers are the server's (see
//! [`ws_config`]). Setup replies are shaped and sized like the server's (`welcome`,
//! `room_joined`, `left`, `pong`) so the same client code reads both.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde::Deserialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// Frames queued per connection before it counts as too slow (the server's default).
const QUEUE: usize = 512;

/// The WebSocket settings: the same buffers as the server's (`http.rs`), so a difference in
/// memory or speed is the server's doing, not the configuration's.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(512)
        .write_buffer_size(0)
        .max_frame_size(Some(4096))
        .max_message_size(Some(4096))
}

type Members = Arc<Mutex<Vec<(u64, mpsc::Sender<Utf8Bytes>)>>>;

#[derive(Default)]
struct State {
    rooms: Mutex<HashMap<String, Members>>,
    next: AtomicU64,
}

/// Serves on `listener` until `shutdown` completes.
pub async fn run(listener: TcpListener, shutdown: impl Future<Output = ()>) {
    let state = Arc::new(State::default());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(state.clone(), stream));
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            },
        }
    }
}

#[derive(Deserialize)]
struct Setup {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    room_id: Option<String>,
    #[serde(default, rename = "as")]
    as_: Option<String>,
}

const SETUP: [&str; 5] = [
    r#"{"type":"hello""#,
    r#"{"type":"create_room""#,
    r#"{"type":"join_room""#,
    r#"{"type":"leave_room""#,
    r#"{"type":"ping""#,
];

async fn connection(state: Arc<State>, stream: TcpStream) {
    let Ok(ws) = tokio_tungstenite::accept_async_with_config(stream, Some(ws_config())).await
    else {
        return;
    };
    let id = state.next.fetch_add(1, Relaxed);
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Utf8Bytes>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(text) = rx.recv().await {
            if sink.send(Message::Text(text)).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let mut room: Option<(String, Members)> = None;
    while let Some(Ok(msg)) = source.next().await {
        let text = match msg {
            Message::Text(t) => t,
            Message::Close(_) => break,
            _ => continue,
        };
        if !SETUP.iter().any(|p| text.as_str().starts_with(p)) {
            // The relay: the same bytes to everyone in the room.
            if let Some((_, members)) = &room {
                let mut slow = Vec::new();
                for (m, q) in members.lock().iter() {
                    if q.try_send(text.clone()).is_err() {
                        slow.push(*m);
                    }
                }
                if !slow.is_empty() {
                    members.lock().retain(|(m, _)| !slow.contains(m));
                }
            }
            continue;
        }
        let Ok(s) = serde_json::from_str::<Setup>(text.as_str()) else {
            continue;
        };
        let re = s.id.map(|v| format!(r#","re":{v}"#)).unwrap_or_default();
        let reply = match s.ty.as_str() {
            "hello" => {
                let name = s.name.unwrap_or_else(|| format!("guest-{id}"));
                format!(
                    r#"{{"type":"welcome"{re},"player_id":"p{id:012}","name":{},"token":"{:064x}","protocol":1,"resumed":false,"bots":[]}}"#,
                    serde_json::Value::from(name),
                    id
                )
            }
            "create_room" => {
                leave(&state, &mut room, id);
                let rid = format!("{:010x}", state.next.fetch_add(1, Relaxed));
                let members: Members = Arc::new(Mutex::new(vec![(id, tx.clone())]));
                state.rooms.lock().insert(rid.clone(), members.clone());
                let reply = joined(&rid, &re, Some("x"));
                room = Some((rid, members));
                reply
            }
            "join_room" => {
                let rid = s.room_id.unwrap_or_default();
                let found = state.rooms.lock().get(&rid).cloned();
                match found {
                    Some(members) => {
                        leave(&state, &mut room, id);
                        members.lock().push((id, tx.clone()));
                        let seat = (s.as_.as_deref() == Some("player")).then_some("o");
                        let reply = joined(&rid, &re, seat);
                        room = Some((rid, members));
                        reply
                    }
                    None => format!(
                        r#"{{"type":"error","code":"no_such_room","message":"no room"{re}}}"#
                    ),
                }
            }
            "leave_room" => {
                let rid = room.as_ref().map(|(r, _)| r.clone()).unwrap_or_default();
                leave(&state, &mut room, id);
                format!(r#"{{"type":"left"{re},"room_id":"{rid}"}}"#)
            }
            _ => format!(r#"{{"type":"pong"{re}}}"#),
        };
        if tx.try_send(reply.into()).is_err() {
            break;
        }
    }
    leave(&state, &mut room, id);
    drop(tx);
    let _ = writer.await;
}

/// A `room_joined` of the server's shape for an empty 15x15 board.
fn joined(rid: &str, re: &str, seat: Option<&str>) -> String {
    let you = match seat {
        Some(s) => format!(r#"{{"role":"player","seat":"{s}"}}"#),
        None => r#"{"role":"spectator"}"#.into(),
    };
    format!(
        r#"{{"type":"room_joined"{re},"room":{{"room_id":"{rid}","game":"caro","width":15,"height":15,"rule":"freestyle","win_length":5,"status":"playing","players":{{"x":{{"name":"x","kind":"human","connected":true}},"o":{{"name":"o","kind":"human","connected":true}}}},"spectators":0,"moves":[],"turn":"x","seq":0}},"you":{you}}}"#
    )
}

/// Takes connection `id` out of its room; an empty room is forgotten.
fn leave(state: &State, room: &mut Option<(String, Members)>, id: u64) {
    if let Some((rid, members)) = room.take() {
        let empty = {
            let mut m = members.lock();
            m.retain(|(c, _)| *c != id);
            m.is_empty()
        };
        if empty {
            state.rooms.lock().remove(&rid);
        }
    }
}
