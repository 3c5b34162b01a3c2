//! The tasks a cluster node runs (docs/scaling.md): the publisher (this node's frames, in
//! order), the inbox (frames for this node and the lobby channel), the leases of its rooms and
//! the sweep that takes over the rooms of a node that died. Like a connection, this part may
//! use the lobby and the server; the [`Link`] below it may not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::wire::{self, Cmd, Op, Reply};
use super::{Link, Out};
use crate::client::{ClientHandle, CLOSE_LOGGED_OUT, CLOSE_TAKEN_OVER};
use crate::protocol::{encode_error, ErrorCode, ProtoError};
use crate::room::{RoomCmd, RoomHandle, Who};
use crate::store::StoreEvent;
use crate::Server;

/// Extends a lease only if it is still this node's: 1 renewed, 0 gone, -1 another node's.
const RENEW: &str = "local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if v then return -1 end
return 0";
/// Deletes a lease only if it is still this node's.
pub(super) const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then
return redis.call('DEL', KEYS[1]) end return 0";
/// The close code for a connection whose room moved to another node: reconnect and resume.
pub const CLOSE_ROOM_MOVED: u16 = 1012;
/// Looks at the lease of a room nobody here knows of, and the wait between them.
const FRESH_LOOKS: u32 = 10;
const FRESH_WAIT: Duration = Duration::from_millis(50);
/// The most frames the publisher sends in one round trip.
const BATCH: usize = 512;

/// Starts the node's tasks on the server's tracker.
pub fn start(server: &Arc<Server>, link: Arc<Link>, out: mpsc::Receiver<Out>) {
    server.tracker.spawn(publisher(link.clone(), out));
    server.tracker.spawn(inbox(server.clone(), link.clone()));
    server.tracker.spawn(leases(server.clone(), link.clone()));
    server.tracker.spawn(sweep(server.clone(), link));
}

/// One frame to publish, and the connections of a delivery.
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

/// Sends what the node queued, in order, a batch per round trip. The same bytes for several
/// connections of one node go as one frame (a room's event is serialized once and sent once per
/// node), as long as no connection's own order changes.
async fn publisher(link: Arc<Link>, mut rx: mpsc::Receiver<Out>) {
    let mut redis = link.redis.clone();
    let mut buf = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut buf, BATCH).await > 0 {
        let mut groups: Vec<Group> = Vec::new();
        // The open delivery group of each (node, bytes), and each connection's last group.
        let mut open: HashMap<(usize, usize, usize), usize> = HashMap::new();
        let mut last: HashMap<(Arc<str>, u64), usize> = HashMap::new();
        for out in buf.drain(..) {
            match out {
                Out::Deliver { node, conn, bytes } => {
                    let key = (
                        node.as_ptr() as usize,
                        bytes.as_str().as_ptr() as usize,
                        bytes.len(),
                    );
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

fn close_conns(server: &Server, conns: impl IntoIterator<Item = u64>, reason: &'static str) {
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
            (Ok(cmd), Ok(req)) => command(server, link, from, req, cmd).await,
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
            for (id, _) in &rooms {
                link.owners.insert(id.clone(), node.clone());
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
        ('U' | 'O' | 'L' | 'T', _) => {}
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
fn moved(server: &Server, link: &Link, room: &str, node: Arc<str>) {
    link.owners.insert(room.into(), node);
    if let Some((_, conns)) = link.members.remove(room) {
        close_conns(server, conns, "the room moved to another node; reconnect");
    }
}

/// Runs a command from a connection of node `from` on the local room it names, answering
/// request `req` (0: no answer wanted) or the connection itself.
async fn command(server: &Arc<Server>, link: &Arc<Link>, from: &str, req: u64, cmd: Cmd) {
    let room: Arc<str> = cmd.room.as_str().into();
    let key = (room.clone(), Arc::<str>::from(from), cmd.conn);
    let proxy = if matches!(cmd.op, Op::Disconnected) {
        match link.proxies.remove(&key) {
            Some((_, p)) => p.client,
            None => return,
        }
    } else {
        let player: Arc<str> = cmd.player_id.as_str().into();
        link.proxy(key, player, || server.next_id())
    };
    let answer = |reply: Reply| {
        let body = serde_json::to_vec(&reply).unwrap_or_default();
        link.publish(
            link.names.inbox(from),
            wire::frame(format_args!("R {req}"), &body),
        );
    };
    let Some(entry) = server.lobby.room(&room) else {
        let e = ProtoError::new(ErrorCode::NoSuchRoom, format!("no room {room:?}"));
        return match cmd.op {
            Op::Join { .. } => answer(Reply::Joined(Err(e.into()))),
            Op::Leave => answer(Reply::Left(Err(e.into()))),
            Op::Reconnect => answer(Reply::Reconnected(false)),
            Op::Disconnected => {}
            op => {
                proxy.send(encode_error(&e, op.re()));
            }
        };
    };
    let who = Who {
        player_id: cmd.player_id.into(),
        name: cmd.name.into(),
        client: proxy.clone(),
    };
    let mut re = cmd.op.re().cloned();
    let sent = match cmd.op {
        Op::Join { as_, re } => {
            let (reply, rx) = oneshot::channel::<Result<crate::room::Joined, ProtoError>>();
            reply_later(link, from, req, async move {
                Reply::Joined(match rx.await {
                    Ok(r) => r.map_err(Into::into),
                    Err(_) => Err(gone().into()),
                })
            });
            entry
                .handle
                .send(RoomCmd::Join {
                    who,
                    as_,
                    re,
                    reply,
                })
                .await
        }
        Op::Leave => {
            let (reply, rx) = oneshot::channel::<Result<(), ProtoError>>();
            reply_later(link, from, req, async move {
                Reply::Left(match rx.await {
                    Ok(r) => r.map_err(Into::into),
                    Err(_) => Err(gone().into()),
                })
            });
            entry.handle.send(RoomCmd::Leave { who, reply }).await
        }
        Op::Reconnect => {
            let (reply, rx) = oneshot::channel();
            reply_later(link, from, req, async move {
                Reply::Reconnected(rx.await.unwrap_or(false))
            });
            entry.handle.send(RoomCmd::Reconnect { who, reply }).await
        }
        Op::Disconnected => {
            let player_id = who.player_id;
            let conn_id = proxy.conn_id;
            re = None;
            entry
                .handle
                .send(RoomCmd::Disconnected { player_id, conn_id })
                .await
        }
        Op::Move { x, y, re } => entry.handle.send(RoomCmd::Move { who, x, y, re }).await,
        Op::Resign { re } => entry.handle.send(RoomCmd::Resign { who, re }).await,
        Op::Sync { since_seq, re } => {
            let cmd = RoomCmd::Sync { who, since_seq, re };
            entry.handle.send(cmd).await
        }
        Op::Say { text, re } => entry.handle.send(RoomCmd::Say { who, text, re }).await,
        Op::Offer { kind, re } => entry.handle.send(RoomCmd::Offer { who, kind, re }).await,
        Op::Respond { kind, accept, re } => {
            let cmd = RoomCmd::Respond {
                who,
                kind,
                accept,
                re,
            };
            entry.handle.send(cmd).await
        }
    };
    // A room that closed meanwhile dropped the reply (answered as gone above); a command
    // without one hears the error on its connection.
    if let (Err(e), false) = (sent, req != 0) {
        proxy.send(encode_error(&e, re.as_ref()));
    }
}

fn gone() -> ProtoError {
    ProtoError::new(ErrorCode::NoSuchRoom, "the room has closed")
}

/// Publishes `reply`'s answer to request `req` of node `from` once it is ready.
fn reply_later(
    link: &Arc<Link>,
    from: &str,
    req: u64,
    reply: impl std::future::Future<Output = Reply> + Send + 'static,
) {
    let (link, inbox) = (link.clone(), link.names.inbox(from));
    tokio::spawn(async move {
        let body = serde_json::to_vec(&reply.await).unwrap_or_default();
        link.publish(inbox, wire::frame(format_args!("R {req}"), &body));
    });
}

/// Every third of the lease: renews the leases of this node's rooms and its heartbeat, takes
/// again a lease that vanished (a restarted Redis), and logs one another node took (fencing
/// stops this node's commits for it).
async fn leases(server: Arc<Server>, link: Arc<Link>) {
    let mut tick = tokio::time::interval(link.lease / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let lease_ms = link.lease.as_millis() as u64;
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let rooms = server.lobby.local_room_ids();
        let mut redis = link.redis.clone();
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(link.names.alive_key(&link.node))
            .arg(1)
            .arg("PX")
            .arg(lease_ms)
            .ignore();
        for room in &rooms {
            pipe.cmd("EVAL")
                .arg(RENEW)
                .arg(1)
                .arg(link.names.owner_key(room))
                .arg(&*link.node)
                .arg(lease_ms);
        }
        let results: Vec<i64> = match pipe.query_async(&mut redis).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("cluster: renewing leases failed: {e}");
                continue;
            }
        };
        for (room, r) in rooms.iter().zip(results) {
            match r {
                0 if !take_lease(&link, room).await => {
                    tracing::warn!(%room, "cluster: another node took this room's lease");
                }
                -1 => tracing::warn!(%room, "cluster: another node holds this room's lease"),
                _ => {}
            }
        }
    }
}

/// `SET NX PX`: whether this node now holds room `room`'s lease.
async fn take_lease(link: &Link, room: &str) -> bool {
    let mut redis = link.redis.clone();
    let r: redis::RedisResult<Option<String>> = redis::cmd("SET")
        .arg(link.names.owner_key(room))
        .arg(&*link.node)
        .arg("NX")
        .arg("PX")
        .arg(link.lease.as_millis() as u64)
        .query_async(&mut redis)
        .await;
    matches!(r, Ok(Some(_)))
}

/// Every half lease: the rooms of other nodes this node knows of (the lobby's, and those its
/// connections are in) whose lease has been gone for a whole lease (their node died; a live
/// node takes its leases again within a third of one, even after Redis restarted empty) are
/// taken over; rooms whose owner changed are noted.
async fn sweep(server: Arc<Server>, link: Arc<Link>) {
    let mut tick = tokio::time::interval(link.lease / 2);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // When each room was first seen without a lease, and each node without a heartbeat.
    let mut missing: HashMap<Arc<str>, tokio::time::Instant> = HashMap::new();
    let mut dead: HashMap<Arc<str>, tokio::time::Instant> = HashMap::new();
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        drop_dead_nodes(&server, &link, &mut dead).await;
        let rooms: Vec<(Arc<str>, Arc<str>)> = link
            .owners
            .iter()
            .map(|e| (e.key().clone(), e.value().clone()))
            .collect();
        if rooms.is_empty() {
            missing.clear();
            continue;
        }
        let keys: Vec<String> = rooms
            .iter()
            .map(|(id, _)| link.names.owner_key(id))
            .collect();
        let mut redis = link.redis.clone();
        let owners: Vec<Option<String>> =
            match redis::cmd("MGET").arg(&keys).query_async(&mut redis).await {
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!("cluster: reading leases failed: {e}");
                    continue;
                }
            };
        let now = tokio::time::Instant::now();
        let mut still = HashMap::new();
        for ((room, node), owner) in rooms.into_iter().zip(owners) {
            match owner {
                None => {
                    let since = missing.get(&room).copied().unwrap_or(now);
                    if now.duration_since(since) >= link.lease {
                        take_over(&server, &link, &room).await;
                    } else {
                        still.insert(room, since);
                    }
                }
                Some(owner) if *owner != *node && *owner != *link.node => {
                    moved(&server, &link, &room, owner.into());
                }
                Some(_) => {}
            }
        }
        missing = still;
    }
}

/// Takes room `room` over (its lease is gone): wins the lease, raises the fence (after which
/// the old owner commits nothing more), reads the game and restores it here. `None` if another
/// node was faster, or the game has finished (then its lobby entry goes).
pub async fn take_over(server: &Arc<Server>, link: &Arc<Link>, room: &str) -> Option<RoomHandle> {
    if !take_lease(link, room).await {
        return None;
    }
    let fenced = server.store.record(StoreEvent::Owner {
        room_id: room.to_string(),
        node: link.node.to_string(),
    });
    let store = server.store.clone();
    let id = room.to_string();
    let game = match fenced.wait().await {
        Ok(()) => tokio::task::spawn_blocking(move || store.game(&id))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten(),
        Err(e) => {
            tracing::warn!(room, "cluster: cannot raise the fence to take a room: {e}");
            None
        }
    };
    let restored = match game {
        Some(g) if g.summary.result.is_none() => match server.lobby.restore_room(&g) {
            Ok(_) => server.lobby.room(room).map(|e| e.handle),
            Err(e) => {
                tracing::error!(room, "cluster: cannot restore a room: {e}");
                None
            }
        },
        _ => None,
    };
    server.lobby.forget_remote(room);
    link.owners.remove(room);
    match &restored {
        Some(_) => {
            tracing::info!(room, "cluster: took the room over");
            link.publish(
                link.names.lobby(),
                wire::frame(format_args!("O {}", link.node), room.as_bytes()),
            );
            if let Some((_, conns)) = link.members.remove(room) {
                close_conns(server, conns, "the room moved to another node; reconnect");
            }
        }
        None => {
            // A finished game (or one that cannot be played here): its lobby entry goes.
            server.store.release_room(room);
            link.release(room);
            link.publish_lobby(&[], &[room.to_string()]);
        }
    }
    restored
}

/// Where room `room` runs: here, on another node (a remote handle), or, when its lease is gone
/// and `may_take` (a room the lobby lists, or a seat the store says the player holds), here
/// after taking it over. `None`: no such room.
pub async fn locate(server: &Arc<Server>, room: &str, may_take: bool) -> Option<RoomHandle> {
    if let Some(e) = server.lobby.room(room) {
        return Some(e.handle);
    }
    let link = server.lobby.cluster()?.clone();
    // A room made a moment ago on another node may not have its lease yet (the node takes it
    // in the background as the creator hears of the room, and the creator can share the id at
    // once): a room nobody here knows of gets a few looks.
    let mut owner = None;
    for look in 0..FRESH_LOOKS {
        owner = lease_owner(&link, room).await;
        if owner.is_some() || may_take || link.owner(room).is_some() {
            break;
        }
        if look + 1 < FRESH_LOOKS {
            tokio::time::sleep(FRESH_WAIT).await;
        }
    }
    let owner = match owner {
        None if may_take || link.owner(room).is_some() => lease_back(&link, room).await,
        owner => owner,
    };
    match owner {
        Some(node) if *node != *link.node => {
            link.owners.insert(room.into(), node.into());
            Some(RoomHandle::remote(room.into(), link))
        }
        Some(_) => None,
        None if may_take || link.owner(room).is_some() => take_over(server, &link, room).await,
        None => None,
    }
}

/// Where room `room` runs once its owner `stale` stopped answering (a resume's reconnect timed
/// out): waits, up to two leases, for its lease to expire or move, then locates it again (taking
/// it over if nobody did). `None`: the owner still holds the lease (it is alive but slow).
pub async fn relocate(server: &Arc<Server>, room: &str) -> Option<RoomHandle> {
    let link = server.lobby.cluster()?.clone();
    let stale = link.owner(room);
    for _ in 0..8 {
        match lease_owner(&link, room).await {
            Some(owner) if Some(owner.as_str()) == stale.as_deref() => {
                tokio::time::sleep(link.lease / 4).await;
            }
            _ => return locate(server, room, true).await,
        }
    }
    None
}

/// A room's lease that is gone may come back: its node is alive and Redis restarted empty (the
/// node takes its leases again within a third of a lease). Waits up to a lease for that: the
/// owner then, or `None` (its node is gone).
async fn lease_back(link: &Link, room: &str) -> Option<String> {
    for _ in 0..6 {
        tokio::time::sleep(link.lease / 6).await;
        if let Some(owner) = lease_owner(link, room).await {
            return Some(owner);
        }
    }
    None
}

/// The node holding room `room`'s lease (`None` also when Redis cannot be read).
async fn lease_owner(link: &Link, room: &str) -> Option<String> {
    let mut redis = link.redis.clone();
    redis::cmd("GET")
        .arg(link.names.owner_key(room))
        .query_async(&mut redis)
        .await
        .ok()
        .flatten()
}

/// At start: which of the store's unfinished games this node restores (those whose lease it
/// wins, with their fence raised first; the others run on other nodes).
pub async fn claim_at_start(server: &Arc<Server>, link: &Link, room: &str) -> bool {
    if !take_lease(link, room).await {
        return false;
    }
    let fenced = server.store.record(StoreEvent::Owner {
        room_id: room.to_string(),
        node: link.node.to_string(),
    });
    fenced.wait().await.is_ok()
}

/// The unfinished rooms `player` created that other nodes run, for its caps (docs/scaling.md,
/// "Caps"). A room whose lease is gone (closed, or its node died and nobody took it yet) no
/// longer counts, and its entry goes; one taken over by another node still counts.
pub async fn claims_elsewhere(server: &Server, player: &str) -> crate::lobby::Counts {
    let mut counts = crate::lobby::Counts::default();
    let Some(link) = server.lobby.cluster() else {
        return counts;
    };
    let key = link.names.claims(player);
    let mut redis = link.redis.clone();
    let rooms: HashMap<String, String> = match redis::cmd("HGETALL")
        .arg(&key)
        .query_async(&mut redis)
        .await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("cluster: reading a player's rooms failed: {e}");
            return counts;
        }
    };
    let rooms: Vec<(String, String)> = rooms
        .into_iter()
        .filter(|(room, _)| server.lobby.room(room).is_none())
        .collect();
    if rooms.is_empty() {
        return counts;
    }
    let keys: Vec<String> = rooms.iter().map(|(r, _)| link.names.owner_key(r)).collect();
    let owners: Vec<Option<String>> = redis::cmd("MGET")
        .arg(&keys)
        .query_async(&mut redis)
        .await
        .unwrap_or_default();
    let mut gone = Vec::new();
    for ((room, kind), owner) in rooms.iter().zip(owners) {
        match owner {
            Some(_) => counts.add(match kind.as_str() {
                "bot" => crate::room::Matchup::AgainstBot,
                "bots" => crate::room::Matchup::BotVsBot,
                _ => crate::room::Matchup::People,
            }),
            None => gone.push(room.clone()),
        }
    }
    if !gone.is_empty() {
        let _: redis::RedisResult<()> = redis::cmd("HDEL")
            .arg(&key)
            .arg(&gone)
            .query_async(&mut redis)
            .await;
    }
    counts
}

/// A proxy's key: the room, the node and its connection.
pub(super) type ProxyKey = (Arc<str>, Arc<str>, u64);

/// A stand-in and whose connection it is.
#[derive(Clone)]
pub struct Proxied {
    /// The stand-in.
    pub client: ClientHandle,
    /// Its player.
    pub player_id: Arc<str>,
}

impl Link {
    /// The stand-in here for connection `conn` of `node` in room `room`, of `player` (made on
    /// its first command there).
    pub(crate) fn proxy(
        &self,
        key: ProxyKey,
        player_id: Arc<str>,
        next_id: impl FnOnce() -> u64,
    ) -> ClientHandle {
        self.proxies
            .entry(key.clone())
            .or_insert_with(|| Proxied {
                client: self.make_proxy(key.1, key.2, next_id()),
                player_id,
            })
            .client
            .clone()
    }
}

/// The nodes with connections in this node's rooms whose heartbeat has been gone for a whole
/// lease (`missing`: since when each was first seen without one): their stand-ins leave the
/// rooms as disconnected connections do (a player's grace starts; its seat waits for it to come
/// back through another node). Without this, a player whose node died would look connected
/// to the room forever.
async fn drop_dead_nodes(
    server: &Server,
    link: &Link,
    missing: &mut HashMap<Arc<str>, tokio::time::Instant>,
) {
    let nodes: Vec<Arc<str>> = {
        let set: HashSet<Arc<str>> = link.proxies.iter().map(|e| e.key().1.clone()).collect();
        set.into_iter().collect()
    };
    if nodes.is_empty() {
        missing.clear();
        return;
    }
    let keys: Vec<String> = nodes.iter().map(|n| link.names.alive_key(n)).collect();
    let mut redis = link.redis.clone();
    let Ok(alive) = redis::cmd("MGET")
        .arg(&keys)
        .query_async::<Vec<Option<String>>>(&mut redis)
        .await
    else {
        return;
    };
    let now = tokio::time::Instant::now();
    let mut still = HashMap::new();
    for (node, alive) in nodes.into_iter().zip(alive) {
        if alive.is_some() {
            continue;
        }
        let since = missing.get(&node).copied().unwrap_or(now);
        if now.duration_since(since) < link.lease {
            still.insert(node, since);
            continue;
        }
        tracing::warn!(%node, "cluster: a node is gone; its connections leave this node's rooms");
        let gone: Vec<(ProxyKey, Proxied)> = link
            .proxies
            .iter()
            .filter(|e| e.key().1 == node)
            .map(|e| (e.key().clone(), e.value().clone()))
            .collect();
        for (key, proxied) in gone {
            link.proxies.remove(&key);
            if let Some(entry) = server.lobby.room(&key.0) {
                let cmd = RoomCmd::Disconnected {
                    player_id: proxied.player_id,
                    conn_id: proxied.client.conn_id,
                };
                let _ = entry.handle.send(cmd).await;
            }
        }
    }
    *missing = still;
}
