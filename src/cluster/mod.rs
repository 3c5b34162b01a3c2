//! Cluster mode (issue 19, docs/scaling.md): several nodes share one PostgreSQL and one Redis.
//! Each room runs on one node, its owner, which holds the room's lease in Redis; every other
//! node reaches it through the [`Link`]: commands go to the owner's inbox channel, replies and
//! the room's events come back on the asking node's inbox, and lobby changes go to every node.
//!
//! This module is the link (a leaf, like `client`: rooms reach it through
//! [`crate::room::RoomHandle`]'s remote route); `node` runs the tasks that need the whole
//! server (the inbox, leases, takeovers); `wire` is the frames.

mod inbound;
pub mod node;
pub mod ownership;
pub mod wire;

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use redis::aio::ConnectionManager;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::client::{ClientHandle, Forwarder};
use crate::metrics::Metrics;
use crate::protocol::{ErrorCode, ProtoError};
use crate::room::RoomCmd;
use wire::{Cmd, Op, Reply};

/// How long a command that wants an answer waits for the owner's, at least (a lease, if
/// longer: an owner that does not answer within its lease is likely gone).
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);
/// Frames waiting for the publisher; beyond it the link is overwhelmed.
const OUT_QUEUE: usize = 1 << 16;

/// What the publisher sends, in order.
pub enum Out {
    /// A message for a connection of `node` (consecutive ones with the same bytes and node go
    /// as one frame).
    Deliver {
        /// Its node.
        node: Arc<str>,
        /// Its connection there.
        conn: u64,
        /// The message.
        bytes: Utf8Bytes,
    },
    /// A whole frame for `channel`.
    Frame {
        /// Channel.
        channel: String,
        /// Frame.
        payload: Vec<u8>,
    },
}

/// This node's way to the others. See the module docs.
pub struct Link {
    /// This node's id.
    pub node: Arc<str>,
    /// When this process joined the cluster (Unix ms): fences of this node's id raised before
    /// are a former process's.
    pub started_ms: i64,
    /// A room's lease.
    pub lease: Duration,
    /// The cluster's channel and key names.
    pub names: wire::Names,
    /// Commands (leases, the lobby hash, publishing); reconnects by itself.
    pub(crate) redis: ConnectionManager,
    /// For the subscription (a connection of its own, made again after a loss).
    pub(crate) client: redis::Client,
    out: mpsc::Sender<Out>,
    pending: DashMap<u64, oneshot::Sender<Reply>>,
    next_req: AtomicU64,
    /// The owner of each room another node runs, as far as this node knows.
    pub(crate) owners: DashMap<Arc<str>, Arc<str>, ahash::RandomState>,
    /// This node's connections in each room another node runs.
    pub(crate) members: DashMap<Arc<str>, HashSet<u64>, ahash::RandomState>,
    /// The node that pairs seekers (docs/scaling.md, "Quick pairing"), as last read.
    pub(crate) leader: parking_lot::RwLock<Option<Arc<str>>>,
    /// The pairing node's `seeks` message as it last told it, while some are open.
    pub(crate) remote_seeks: parking_lot::Mutex<Option<Utf8Bytes>>,
    /// This node's connections with a seek on the pairing node.
    pub(crate) seekers: DashMap<u64, (), ahash::RandomState>,
    /// The stand-ins here of other nodes' connections in this node's rooms.
    pub(crate) proxies: DashMap<inbound::ProxyKey, inbound::Proxied, ahash::RandomState>,
    /// Other nodes' commands for busy rooms of this node, in order (see `inbound::deliver`).
    pub(crate) lanes: DashMap<Arc<str>, mpsc::Sender<RoomCmd>, ahash::RandomState>,
    metrics: Arc<Metrics>,
}

/// A stand-in for a connection of another node: what a room sends it goes to that node.
struct Proxy {
    out: mpsc::Sender<Out>,
    node: Arc<str>,
    /// The node's inbox channel.
    inbox: String,
    conn: u64,
}

impl Forwarder for Proxy {
    fn send(&self, bytes: Utf8Bytes) -> bool {
        let node = self.node.clone();
        let conn = self.conn;
        self.out
            .try_send(Out::Deliver { node, conn, bytes })
            .is_ok()
    }

    fn close(&self, code: u16, _reason: &'static str) {
        let payload = wire::frame(format_args!("K {} {code}", self.conn), b"");
        let channel = self.inbox.clone();
        // The close must reach the connection even when the queue is full (that is when a
        // stand-in is closed as too slow): then it waits for room.
        if let Err(mpsc::error::TrySendError::Full(frame)) =
            self.out.try_send(Out::Frame { channel, payload })
        {
            let out = self.out.clone();
            tokio::spawn(async move { out.send(frame).await });
        }
    }
}

fn unavailable(why: &str) -> ProtoError {
    ProtoError::new(
        ErrorCode::RoomUnavailable,
        format!("the room's node {why}; try again"),
    )
}

impl Link {
    /// Connects to the Redis of `config` (a first connection must succeed: a node does not
    /// start without its cluster). Returns the link and the queue its publisher drains.
    pub async fn connect(
        config: &crate::config::ClusterConfig,
        metrics: Arc<Metrics>,
    ) -> Result<(Arc<Link>, mpsc::Receiver<Out>), redis::RedisError> {
        let client = redis::Client::open(config.redis_url.as_str())?;
        let redis = ConnectionManager::new(client.clone()).await?;
        let (out, rx) = mpsc::channel(OUT_QUEUE);
        let link = Arc::new(Link {
            node: config.node_id.as_str().into(),
            started_ms: crate::store::now_ms(),
            lease: config.lease,
            names: wire::Names::new(&config.namespace),
            redis,
            client,
            out,
            pending: DashMap::new(),
            next_req: AtomicU64::new(1),
            owners: DashMap::default(),
            members: DashMap::default(),
            proxies: DashMap::default(),
            lanes: DashMap::default(),
            leader: parking_lot::RwLock::new(None),
            remote_seeks: parking_lot::Mutex::new(None),
            seekers: DashMap::default(),
            metrics,
        });
        Ok((link, rx))
    }

    /// Queues a frame for `channel`; false if the publisher is overwhelmed.
    pub(crate) fn publish(&self, channel: String, payload: Vec<u8>) -> bool {
        self.out.try_send(Out::Frame { channel, payload }).is_ok()
    }

    /// The node that runs room `room`, as far as this node knows.
    pub fn owner(&self, room: &str) -> Option<Arc<str>> {
        self.owners.get(room).map(|n| n.clone())
    }

    /// A stand-in, numbered `id` here, for connection `conn` of `node`.
    pub(crate) fn make_proxy(&self, node: Arc<str>, conn: u64, id: u64) -> ClientHandle {
        let proxy = Proxy {
            out: self.out.clone(),
            inbox: self.names.inbox(&node),
            node,
            conn,
        };
        ClientHandle::remote(id, Arc::new(proxy), self.metrics.clone())
    }

    /// Hands an answer to the command that waits for it.
    pub(crate) fn answered(&self, req: u64, reply: Reply) {
        if let Some((_, tx)) = self.pending.remove(&req) {
            let _ = tx.send(reply);
        }
    }

    /// Sends `cmd` for room `room` to the node that runs it. A command that wants an answer
    /// gets it from a task that waits up to `REPLY_TIMEOUT` (then `room_unavailable`).
    pub fn forward(self: &Arc<Self>, room: &Arc<str>, cmd: RoomCmd) -> Result<(), ProtoError> {
        let node = self
            .owner(room)
            .ok_or_else(|| ProtoError::new(ErrorCode::NoSuchRoom, "the room has closed"))?;
        let mut asks: Option<Box<dyn FnOnce(Option<Reply>) + Send>> = None;
        // The address goes with what makes a member (see `Cmd::ip`).
        let mut ip = None;
        let (who_conn, player_id, name, op) = match cmd {
            RoomCmd::Join {
                who,
                as_,
                re,
                reply,
            } => {
                let (link, room, conn) = (self.clone(), room.clone(), who.client.conn_id);
                ip = who.ip;
                asks = Some(Box::new(move |r| {
                    let joined = match r {
                        Some(Reply::Joined(r)) => r.map_err(ProtoError::from),
                        _ => Err(unavailable("did not answer")),
                    };
                    if joined.is_ok() {
                        link.members.entry(room).or_default().insert(conn);
                    }
                    let _ = reply.send(joined);
                }));
                (
                    who.client.conn_id,
                    who.player_id,
                    who.name,
                    Op::Join { as_, re },
                )
            }
            RoomCmd::Leave { who, reply } => {
                self.left(room, who.client.conn_id);
                asks = Some(Box::new(move |r| {
                    let _ = reply.send(match r {
                        Some(Reply::Left(r)) => r.map_err(ProtoError::from),
                        _ => Err(unavailable("did not answer")),
                    });
                }));
                (who.client.conn_id, who.player_id, who.name, Op::Leave)
            }
            RoomCmd::Reconnect { who, reply } => {
                let (link, room, conn) = (self.clone(), room.clone(), who.client.conn_id);
                ip = who.ip;
                asks = Some(Box::new(move |r| {
                    let back = matches!(r, Some(Reply::Reconnected(true)));
                    if back {
                        link.members.entry(room).or_default().insert(conn);
                    }
                    let _ = reply.send(back);
                }));
                (who.client.conn_id, who.player_id, who.name, Op::Reconnect)
            }
            RoomCmd::Disconnected { player_id, conn_id } => {
                self.left(room, conn_id);
                (conn_id, player_id, "".into(), Op::Disconnected)
            }
            RoomCmd::Move { who, x, y, re } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Move { x, y, re },
            ),
            RoomCmd::Resign { who, re } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Resign { re },
            ),
            RoomCmd::Sync { who, since_seq, re } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Sync { since_seq, re },
            ),
            RoomCmd::Say { who, text, re } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Say { text, re },
            ),
            RoomCmd::Offer { who, kind, re } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Offer { kind, re },
            ),
            RoomCmd::Respond {
                who,
                kind,
                accept,
                re,
            } => (
                who.client.conn_id,
                who.player_id,
                who.name,
                Op::Respond { kind, accept, re },
            ),
        };
        let cmd = Cmd {
            room: room.to_string(),
            conn: who_conn,
            player_id: player_id.to_string(),
            name: name.to_string(),
            ip,
            op,
        };
        let req = match asks {
            None => 0,
            Some(_) => self.next_req.fetch_add(1, Ordering::Relaxed),
        };
        // A join or reconnect that gets no answer may still happen at the owner later: then a
        // `Disconnected` follows it there (the owner's inbox keeps order), so no member stays
        // that this node has given up on.
        let undo = matches!(cmd.op, Op::Join { .. } | Op::Reconnect).then(|| Cmd {
            room: cmd.room.clone(),
            conn: cmd.conn,
            player_id: cmd.player_id.clone(),
            name: String::new(),
            ip: None,
            op: Op::Disconnected,
        });
        if let Some(asks) = asks {
            let (tx, rx) = oneshot::channel();
            self.pending.insert(req, tx);
            let (link, owner) = (self.clone(), node.clone());
            tokio::spawn(async move {
                let r = tokio::time::timeout(REPLY_TIMEOUT.max(link.lease), rx).await;
                link.pending.remove(&req);
                let reply = r.ok().and_then(Result::ok);
                if let (None, Some(undo)) = (&reply, undo) {
                    link.send_cmd(&owner, 0, &undo);
                }
                asks(reply);
            });
        }
        if !self.send_cmd(&node, req, &cmd) {
            return Err(unavailable("cannot be reached now (the link is full)"));
        }
        Ok(())
    }

    /// Publishes `cmd` on `node`'s inbox as request `req` (0: no answer wanted); false if the
    /// publisher is overwhelmed.
    fn send_cmd(&self, node: &str, req: u64, cmd: &Cmd) -> bool {
        let body = serde_json::to_vec(cmd).unwrap_or_default();
        let frame = wire::frame(format_args!("C {} {req}", self.node), &body);
        self.publish(self.names.inbox(node), frame)
    }

    /// This node's connection `conn` is no longer in room `room`.
    fn left(&self, room: &str, conn: u64) {
        if let Some(mut m) = self.members.get_mut(room) {
            m.remove(&conn);
        }
        self.members.remove_if(room, |_, m| m.is_empty());
    }

    /// Takes the lease of a room this node just made (nobody else can want a fresh id), then
    /// notes the room in its creator's hash of rooms for the caps (docs/scaling.md, "Caps"):
    /// only once the lease is taken, so that no node counting the creator's rooms finds it
    /// without a lease and drops it as gone. In the background; the handle ends when both are
    /// done. A lease not taken (Redis did not answer) is taken again by the renewal, but the
    /// room is then not noted: it does not count on the other nodes.
    pub fn take_new(
        self: &Arc<Self>,
        room: &str,
        creator: &str,
        matchup: crate::room::Matchup,
    ) -> tokio::task::JoinHandle<()> {
        let (link, room) = (self.clone(), room.to_string());
        let key = link.names.claims(creator);
        tokio::spawn(async move {
            if ownership::take_key(&link, &link.names.owner_key(&room)).await != Ok(true) {
                return;
            }
            let mut redis = link.redis.clone();
            let noted: redis::RedisResult<()> = redis::cmd("HSET")
                .arg(&key)
                .arg(&room)
                .arg(wire::claim_kind(matchup))
                .query_async(&mut redis)
                .await;
            if let Err(e) = noted {
                tracing::warn!(key, "cluster: noting a room of a player failed: {e}");
            }
        })
    }

    /// A room of this node closed: its lease goes (if still this node's).
    pub fn release(self: &Arc<Self>, room: &str) {
        let key = self.names.owner_key(room);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(ownership::RELEASE)
            .arg(1)
            .arg(&key)
            .arg(&*self.node);
        self.in_background(cmd, "releasing a lease", key);
    }

    /// Runs `cmd` on Redis without waiting for it; a failure is logged (`what` failed, for
    /// `key`).
    fn in_background(self: &Arc<Self>, cmd: redis::Cmd, what: &'static str, key: String) {
        let link = self.clone();
        tokio::spawn(async move {
            let mut redis = link.redis.clone();
            if let Err(e) = cmd.query_async::<()>(&mut redis).await {
                tracing::warn!(%key, "cluster: {what} failed: {e}");
            }
        });
    }

    /// Tells every node (and the lobby hash) which of this node's rooms opened or changed and
    /// which closed.
    pub fn publish_lobby(
        self: &Arc<Self>,
        rooms: &[crate::protocol::RoomSummary],
        removed: &[String],
    ) {
        let summaries: Vec<Arc<serde_json::value::RawValue>> = rooms
            .iter()
            .filter_map(|r| serde_json::value::to_raw_value(r).ok().map(Arc::from))
            .collect();
        let entries: Vec<(String, String)> = rooms
            .iter()
            .zip(&summaries)
            .map(|(r, summary)| {
                let entry = wire::LobbyEntry {
                    node: self.node.to_string(),
                    summary: summary.clone(),
                };
                (
                    r.room_id.clone(),
                    serde_json::to_string(&entry).unwrap_or_default(),
                )
            })
            .collect();
        let change = wire::LobbyChange {
            rooms: summaries,
            removed: removed.to_vec(),
        };
        let body = serde_json::to_vec(&change).unwrap_or_default();
        let frame = wire::frame(format_args!("U {}", self.node), &body);
        let (link, removed) = (self.clone(), removed.to_vec());
        tokio::spawn(async move {
            let mut redis = link.redis.clone();
            let mut pipe = redis::pipe();
            if !entries.is_empty() {
                pipe.hset_multiple(link.names.lobby_rooms(), &entries)
                    .ignore();
            }
            if !removed.is_empty() {
                pipe.hdel(link.names.lobby_rooms(), &removed).ignore();
            }
            if let Err(e) = pipe.query_async::<()>(&mut redis).await {
                tracing::warn!("cluster: writing the lobby hash failed: {e}");
            }
        });
        self.publish(self.names.lobby(), frame);
    }

    /// Tells every other node something about identities: `L` + a player id (its account
    /// logged out everywhere), `T` + a token hash (its session resumed here), `G` + rating rows
    /// (a rated game's new ratings).
    pub fn announce(&self, kind: char, body: &str) {
        let frame = wire::frame(format_args!("{kind} {}", self.node), body.as_bytes());
        self.publish(self.names.lobby(), frame);
    }

    /// The room `room` of `player` no longer counts against its caps.
    pub fn drop_claim(self: &Arc<Self>, player: &str, room: &str) {
        let key = self.names.claims(player);
        let mut cmd = redis::cmd("HDEL");
        cmd.arg(&key).arg(room);
        self.in_background(cmd, "dropping a room of a player", key);
    }

    /// Room `room` of this node closed: the stand-ins of other nodes' connections in it go.
    pub fn forget_room(&self, room: &str) {
        self.proxies.retain(|k, _| &*k.0 != room);
    }

    /// Who pairs seekers: `Ok(true)` this node, `Ok(false)` another (this one forwards its
    /// seeks there), `Err` not known yet (a node's first lease round, or Redis unreachable).
    pub fn pairs_here(&self) -> Result<bool, ProtoError> {
        match &*self.leader.read() {
            Some(l) => Ok(*l == self.node),
            None => Err(unavailable("that pairs seekers is not known yet")),
        }
    }

    /// The pairing node's open seeks as it last told them (none open: `None`).
    pub fn seeks(&self) -> Option<Utf8Bytes> {
        self.remote_seeks.lock().clone()
    }

    /// Sends a seek command of `who` to the pairing node (its answers and `paired` come back
    /// to the connection like a room's messages).
    pub fn forward_pairing(&self, who: &crate::room::Who, op: Op) -> Result<(), ProtoError> {
        let conn = who.client.conn_id;
        match op {
            Op::Seek { .. } => {
                self.seekers.insert(conn, ());
            }
            Op::CancelSeek { .. } | Op::ForgetSeeks => {
                self.seekers.remove(&conn);
            }
            _ => {}
        }
        self.to_pairing(conn, &who.player_id, &who.name, who.ip, op)
    }

    /// This node's connection `conn` closed: its seek on the pairing node goes.
    pub fn forget_seeker(&self, conn: u64, player_id: &Arc<str>) {
        if self.seekers.remove(&conn).is_some() {
            let _ = self.to_pairing(conn, player_id, "", None, Op::ForgetSeeks);
        }
    }

    /// Publishes a pairing command of connection `conn` (at `ip`) to the pairing node.
    fn to_pairing(
        &self,
        conn: u64,
        player_id: &str,
        name: &str,
        ip: Option<IpAddr>,
        op: Op,
    ) -> Result<(), ProtoError> {
        let Some(leader) = self.leader.read().clone() else {
            return Err(unavailable("is not known yet"));
        };
        let cmd = Cmd {
            room: String::new(),
            conn,
            player_id: player_id.to_string(),
            name: name.to_string(),
            ip,
            op,
        };
        if !self.send_cmd(&leader, 0, &cmd) {
            return Err(unavailable("cannot be reached now (the link is full)"));
        }
        Ok(())
    }
}
