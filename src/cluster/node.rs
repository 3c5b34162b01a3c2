//! The tasks a cluster node runs (docs/scaling.md): the publisher (this node's frames, in
//! order) and the inbox (frames for this node and the lobby channel), which hands commands to
//! `inbound` and ownership to `ownership`. Like a connection, this part may use the lobby and
//! the server; the [`Link`] below it may not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::wire::{self, Cmd, Reply};
use super::{inbound, ownership, Link, Out};
use crate::client::{CLOSE_LOGGED_OUT, CLOSE_ROOM_MOVED, CLOSE_TAKEN_OVER};
use crate::Server;

/// The most frames the publisher sends in one round trip.
const BATCH: usize = 512;

/// Starts the node's tasks on the server's tracker, and has every rated game's new ratings
/// told to the other nodes (a `G` frame), whose books follow.
pub fn start(server: &Arc<Server>, link: Arc<Link>, out: mpsc::Receiver<Out>) {
    let teller = link.clone();
    server.ratings.observe(Box::new(move |rows| {
        if let Ok(body) = serde_json::to_string(rows) {
            teller.announce('G', &body);
        }
    }));
    // The pairing node tells every node's lobby watchers its open seeks.
    let teller = link.clone();
    server.pairing.observe(Box::new(move |seeks, open| {
        if teller.leader.read().as_deref() == Some(&*teller.node) {
            let frame = wire::frame(
                format_args!("Z {} {}", teller.node, u8::from(open)),
                seeks.as_bytes(),
            );
            teller.publish(teller.names.lobby(), frame);
        }
    }));
    server
        .tracker
        .spawn(publisher(link.clone(), out, server.shutdown.clone()));
    server.tracker.spawn(inbox(server.clone(), link.clone()));
    server
        .tracker
        .spawn(ownership::leases(server.clone(), link.clone()));
    server.tracker.spawn(ownership::sweep(server.clone(), link));
}

/// One frame to publish, and the connections of a delivery.
#[derive(Debug, PartialEq)]
enum Group {
    Deliver {
        node: Arc<str>,
        bytes: Utf8Bytes,
        conns: Vec<u64>,
    },
    Frame {
        channel: String,
        payload: Vec<u8>,
    },
}

/// The frames for `outs`, in order: the deliveries of the same bytes (the same serialization,
/// by address) to connections of the same node join the first such frame, unless a connection
/// already has a later message in the batch (its order must not change).
fn group(outs: impl Iterator<Item = Out>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    // The open delivery group of each (node, bytes), and each connection's last group.
    let mut open: HashMap<(Arc<str>, usize, usize), usize> = HashMap::new();
    let mut last: HashMap<(Arc<str>, u64), usize> = HashMap::new();
    for out in outs {
        match out {
            Out::Deliver { node, conn, bytes } => {
                let key = (node.clone(), bytes.as_str().as_ptr() as usize, bytes.len());
                let before = last.get(&(node.clone(), conn)).copied();
                match open.get(&key) {
                    Some(&g) if before.map_or(true, |b| b < g) => {
                        if let Group::Deliver { conns, .. } = &mut groups[g] {
                            conns.push(conn);
                        }
                        last.insert((node, conn), g);
                    }
                    _ => {
                        let g = groups.len();
                        open.insert(key, g);
                        last.insert((node.clone(), conn), g);
                        groups.push(Group::Deliver {
                            node,
                            bytes,
                            conns: vec![conn],
                        });
                    }
                }
            }
            Out::Frame { channel, payload } => groups.push(Group::Frame { channel, payload }),
        }
    }
    groups
}

/// Sends what the node queued, in order, a batch per round trip. The same bytes for several
/// connections of one node go as one frame (a room's event is serialized once and sent once per
/// node), as long as no connection's own order changes.
async fn publisher(
    link: Arc<Link>,
    mut rx: mpsc::Receiver<Out>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut redis = link.redis.clone();
    let mut buf = Vec::with_capacity(BATCH);
    loop {
        // The link keeps a sender, so the queue never closes: the shutdown ends this task.
        let n = tokio::select! {
            n = rx.recv_many(&mut buf, BATCH) => n,
            _ = shutdown.cancelled() => return,
        };
        if n == 0 {
            return;
        }
        let groups = group(buf.drain(..));
        let mut pipe = redis::pipe();
        for g in groups {
            match g {
                Group::Deliver { node, bytes, conns } => {
                    let list: Vec<String> = conns.iter().map(u64::to_string).collect();
                    let frame = wire::frame(format_args!("D {}", list.join(",")), bytes.as_bytes());
                    pipe.publish(link.names.inbox(&node), frame).ignore();
                }
                Group::Frame { channel, payload } => {
                    pipe.publish(channel, payload).ignore();
                }
            }
        }
        if let Err(e) = pipe.query_async::<()>(&mut redis).await {
            tracing::warn!("cluster: publishing failed (frames lost): {e}");
        }
    }
}

/// Receives this node's frames and the lobby's, reconnecting (with backoff) when Redis goes.
async fn inbox(server: Arc<Server>, link: Arc<Link>) {
    let redis = link.client.clone();
    let mut first = true;
    let mut backoff = Duration::from_millis(100);
    while !server.shutdown.is_cancelled() {
        match subscribe(&redis, &link).await {
            Ok(mut stream) => {
                backoff = Duration::from_millis(100);
                seed_lobby(&server, &link).await;
                if !first {
                    reconnected(&server, &link);
                }
                first = false;
                loop {
                    tokio::select! {
                        _ = server.shutdown.cancelled() => return,
                        msg = stream.next() => match msg {
                            Some(msg) => {
                                on_frame(&server, &link, msg.get_channel_name(), msg.get_payload_bytes()).await
                            }
                            None => break,
                        },
                    }
                }
                tracing::warn!("cluster: lost the Redis subscription; reconnecting");
            }
            Err(e) => tracing::warn!("cluster: cannot subscribe to Redis: {e}"),
        }
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

async fn subscribe(
    redis: &redis::Client,
    link: &Link,
) -> redis::RedisResult<redis::aio::PubSubStream> {
    let mut pubsub = redis.get_async_pubsub().await?;
    pubsub.subscribe(link.names.inbox(&link.node)).await?;
    pubsub.subscribe(link.names.lobby()).await?;
    Ok(pubsub.into_on_message())
}

/// Back after losing Redis: frames of the rooms this node's connections watch elsewhere may be
/// lost, so those connections are closed to reconnect and catch up (their seats are kept), and
/// this node's rooms are published again (a restarted Redis has lost the lobby hash).
fn reconnected(server: &Server, link: &Link) {
    tracing::info!("cluster: Redis is back");
    server.lobby.republish();
    let conns: HashSet<u64> = link.members.iter().flat_map(|m| m.clone()).collect();
    link.members.clear();
    close_conns(
        server,
        conns,
        "the link to the room's node was lost; reconnect",
    );
}

pub(super) fn close_conns(
    server: &Server,
    conns: impl IntoIterator<Item = u64>,
    reason: &'static str,
) {
    for conn in conns {
        if let Some(c) = server.connection(conn) {
            c.close(CLOSE_ROOM_MOVED, reason);
        }
    }
}

/// Fills the lobby's mirror from the lobby hash (at start and after a reconnect).
async fn seed_lobby(server: &Server, link: &Link) {
    let mut redis = link.redis.clone();
    let all: HashMap<String, String> = match redis::cmd("HGETALL")
        .arg(link.names.lobby_rooms())
        .query_async(&mut redis)
        .await
    {
        Ok(all) => all,
        Err(e) => return tracing::warn!("cluster: reading the lobby hash failed: {e}"),
    };
    let mut by_node: HashMap<Arc<str>, Vec<(Arc<str>, _)>> = HashMap::new();
    for (id, entry) in all {
        let Ok(entry) = serde_json::from_str::<wire::LobbyEntry>(&entry) else {
            continue;
        };
        if entry.node == *link.node {
            continue;
        }
        let (id, node): (Arc<str>, Arc<str>) = (id.into(), entry.node.into());
        link.owners.insert(id.clone(), node.clone());
        by_node.entry(node).or_default().push((id, entry.summary));
    }
    for (node, rooms) in by_node {
        server.lobby.apply_remote(&node, rooms, Vec::new());
    }
}

async fn on_frame(server: &Arc<Server>, link: &Arc<Link>, channel: &str, payload: &[u8]) {
    let Some((kind, words, body)) = wire::parse(payload) else {
        return tracing::warn!(channel, "cluster: a frame without a header");
    };
    match (kind, words.as_slice()) {
        ('D', [conns]) => {
            let Ok(text) = std::str::from_utf8(body) else {
                return;
            };
            let bytes = Utf8Bytes::from(text.to_string());
            for conn in conns.split(',').filter_map(|c| c.parse().ok()) {
                if let Some(c) = server.connection(conn) {
                    c.send(bytes.clone());
                }
            }
        }
        ('K', [conn, code]) => {
            if let (Ok(conn), Ok(code)) = (conn.parse(), code.parse()) {
                if let Some(c) = server.connection(conn) {
                    c.close(code, "closed by the room's node");
                }
            }
        }
        ('C', [from, req]) => match (serde_json::from_slice::<Cmd>(body), req.parse()) {
            (Ok(cmd), Ok(req)) => inbound::command(server, link, from, req, cmd).await,
            _ => tracing::warn!(from, "cluster: a command that does not parse"),
        },
        ('R', [req]) => {
            if let (Ok(req), Ok(reply)) = (req.parse(), serde_json::from_slice::<Reply>(body)) {
                link.answered(req, reply);
            }
        }
        ('U', [node]) if *node != &*link.node => {
            let change = match serde_json::from_slice::<wire::LobbyChange>(body) {
                Ok(c) => c,
                Err(e) => return tracing::warn!("cluster: a lobby frame that does not parse: {e}"),
            };
            let node: Arc<str> = (*node).into();
            let rooms: Vec<_> = change
                .rooms
                .into_iter()
                .filter_map(|s| Some((Arc::<str>::from(wire::room_id_of(&s)?), s)))
                .collect();
            // The owner a takeover (`O`) or a lease lookup named stays: a frame of a node that
            // lost the room and still ran a stale copy must not send commands back to it.
            for (id, _) in &rooms {
                link.owners
                    .entry(id.clone())
                    .or_insert_with(|| node.clone());
            }
            for id in &change.removed {
                link.owners.remove_if(id.as_str(), |_, n| *n == node);
                link.members.remove(id.as_str());
            }
            server.lobby.apply_remote(&node, rooms, change.removed);
        }
        ('O', [node]) if *node != &*link.node => {
            let Ok(room) = std::str::from_utf8(body) else {
                return;
            };
            moved(server, link, room, (*node).into());
        }
        ('L', [node]) if *node != &*link.node => {
            if let Ok(player) = std::str::from_utf8(body) {
                server.accounts.forget_tokens(player);
                logged_out(server, player);
            }
        }
        ('T', [node]) if *node != &*link.node => {
            let session = std::str::from_utf8(body)
                .ok()
                .and_then(|hash| server.lobby.session_by_hash(hash));
            if let Some(conn) = session.and_then(|s| s.conn.lock().take()) {
                conn.close(CLOSE_TAKEN_OVER, "session resumed on another connection");
            }
        }
        ('G', [node]) if *node != &*link.node => {
            match serde_json::from_slice::<Vec<crate::store::RatingRow>>(body) {
                Ok(rows) => server.ratings.load(rows),
                Err(e) => tracing::warn!("cluster: a ratings frame that does not parse: {e}"),
            }
        }
        ('Z', [node, open]) if *node != &*link.node => {
            let Ok(text) = std::str::from_utf8(body) else {
                return;
            };
            let seeks = Utf8Bytes::from(text.to_string());
            *link.remote_seeks.lock() = (*open == "1").then(|| seeks.clone());
            server.lobby.tell_watchers(&seeks);
        }
        ('U' | 'O' | 'L' | 'T' | 'G' | 'Z', _) => {}
        _ => tracing::warn!(channel, %kind, "cluster: an unknown frame"),
    }
}

/// Account `player` logged out everywhere: this node forgets its sessions and closes their
/// connections (4001).
pub fn logged_out(server: &Server, player: &str) {
    for s in server.lobby.forget_player(player) {
        if let Some(c) = s.conn.lock().clone() {
            c.close(CLOSE_LOGGED_OUT, "logged out everywhere");
        }
    }
}

/// Room `room` now runs on `node`: this node's connections in its old copy reconnect.
pub(super) fn moved(server: &Server, link: &Link, room: &str, node: Arc<str>) {
    // A copy still running here lost the room (this node was paused past its lease).
    if let Some(e) = server.lobby.room(room) {
        tracing::warn!(room, %node, "cluster: another node runs this room now; stopping it here");
        e.handle.moved();
    }
    server.lobby.remote_moved(room, &node);
    link.owners.insert(room.into(), node);
    if let Some((_, conns)) = link.members.remove(room) {
        close_conns(server, conns, "the room moved to another node; reconnect");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deliver(node: &str, conn: u64, bytes: &Utf8Bytes) -> Out {
        Out::Deliver {
            node: node.into(),
            conn,
            bytes: bytes.clone(),
        }
    }

    fn frame(node: &str, bytes: &Utf8Bytes, conns: &[u64]) -> Group {
        Group::Deliver {
            node: node.into(),
            bytes: bytes.clone(),
            conns: conns.to_vec(),
        }
    }

    #[test]
    fn an_event_goes_once_per_node_and_no_connection_changes_order() {
        // One event's bytes to members on nodes b and c, interleaved as a room's members are;
        // equal text serialized apart is another message; then the next event.
        let ev1 = Utf8Bytes::from(r#"{"type":"move","seq":1}"#.to_string());
        let copy = Utf8Bytes::from(r#"{"type":"move","seq":1}"#.to_string());
        let ev2 = Utf8Bytes::from(r#"{"type":"move","seq":2}"#.to_string());
        let outs = vec![
            deliver("b", 1, &ev1),
            deliver("c", 7, &ev1),
            deliver("b", 2, &ev1),
            deliver("c", 8, &ev1),
            deliver("b", 3, &copy),
            deliver("b", 1, &ev2),
            deliver("b", 2, &ev2),
            // Connection 3 already has a message after ev1's frame: it cannot join it.
            deliver("b", 3, &ev1),
        ];
        assert_eq!(
            group(outs.into_iter()),
            [
                frame("b", &ev1, &[1, 2]),
                frame("c", &ev1, &[7, 8]),
                frame("b", &copy, &[3]),
                frame("b", &ev2, &[1, 2]),
                frame("b", &ev1, &[3]),
            ]
        );
    }
}
