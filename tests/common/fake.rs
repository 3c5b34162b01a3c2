//! In-memory clients for tests that run rooms on tokio's paused clock (`start_paused`): a
//! `ClientHandle` whose queue the test reads directly, no socket, so minutes pass instantly and
//! exactly.

use std::sync::Arc;

use caro_arena::client::ClientHandle;
use caro_arena::protocol::SeatSpec;
use caro_arena::room::{RoomHandle, Who};
use caro_arena::Server;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// A client: its identity (player id `id-<name>`) and what the server queued for it.
pub struct Fake {
    pub who: Who,
    pub rx: mpsc::Receiver<Utf8Bytes>,
}

impl Fake {
    pub fn new(server: &Arc<Server>, name: &str) -> Fake {
        let (client, rx) = ClientHandle::new(server.next_id(), 64, server.metrics.clone());
        Fake {
            who: Who {
                player_id: format!("id-{name}").into(),
                name: name.into(),
                client,
                ip: None,
            },
            rx,
        }
    }

    /// Everything queued so far, once the rooms have caught up.
    pub async fn drain(&mut self) -> Vec<Value> {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        let mut out = Vec::new();
        while let Ok(b) = self.rx.try_recv() {
            out.push(serde_json::from_str(b.as_str()).unwrap());
        }
        out
    }

    /// The `type` of each message.
    pub fn types(v: &[Value]) -> Vec<&str> {
        v.iter().map(|m| m["type"].as_str().unwrap()).collect()
    }
}

/// A 15x15 Caro room (with the `time_control`, if any) created by `x` in the X seat, the O seat
/// open; `o` has not joined and nothing sent is read yet.
pub fn opened(server: &Arc<Server>, time_control: Option<&Value>) -> (Fake, Fake, RoomHandle) {
    let x = Fake::new(server, "x");
    let o = Fake::new(server, "o");
    let params = server
        .lobby
        .check_params(
            "caro",
            None,
            None,
            None,
            &SeatSpec::Word("me".into()),
            &SeatSpec::Word("open".into()),
            time_control,
        )
        .unwrap();
    let (handle, _) = server.lobby.open_room(x.who.clone(), params, None).unwrap();
    (x, o, handle)
}

/// The room of [`opened`] joined by `o`, so the game has started; what both were sent so far
/// is read.
pub async fn seated(
    server: &Arc<Server>,
    time_control: Option<&Value>,
) -> (Fake, Fake, RoomHandle) {
    let (mut x, mut o, handle) = opened(server, time_control);
    handle.join(o.who.clone(), None, None).await.unwrap();
    x.drain().await;
    o.drain().await;
    (x, o, handle)
}
