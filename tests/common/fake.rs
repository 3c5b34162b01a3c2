//! In-memory clients for tests that run rooms on tokio's paused clock (`start_paused`): a
//! `ClientHandle` whose queue the test reads directly, no socket, so minutes pass instantly and
//! exactly.

use std::sync::Arc;

use caro_arena::client::ClientHandle;
use caro_arena::room::Who;
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
