//! The lobby: the room registry and the sessions (tokens), both DashMaps that are never held
//! across an `.await`. A session is an identity (player id, name, secret token) that outlives
//! connections, so a player who reconnects with the token gets their seats back.
//!
//! A session costs memory only until it first takes a seat: only then is it written to the
//! store ([`Lobby::seated`]), so a `hello` that never sits leaves no row. Sessions without a
//! connection or a seat in an open room expire: never seated ones after
//! `server.session_idle_ttl_ms`, the others after `server.session_ttl_ms`; the [`janitor`]
//! forgets them and has the store delete expired rows while running.
//!
//! The lobby decides nothing about games: rooms do. It opens them ([`Lobby::open_room`],
//! [`Lobby::restore_room`]) with the one [`RoomContext`] they share, and is the
//! [`Registry`](room::Registry) they report their end to. It must never import `connection` or
//! `crate::Server`: connections call the lobby, not the other way round.
//!
//! Rooms are reached only through their [`RoomHandle`], so a room on another node could be
//! registered here behind the same handle (see `room`'s module docs).

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod caps;
mod remote;

use caps::Claims;
pub use caps::{Counts, PlayerCaps};
pub use remote::RemoteRoom;

use crate::client::ClientHandle;
use crate::cluster::Link;
use crate::latest::Latest;
use crate::protocol::{
    encode, ErrorCode, Listed, PlayerInfo, ProtoError, RoomStatus, RoomSummary, SeatSpec, ServerMsg,
};
use crate::room::{self, Joined, Matchup, RoomContext, RoomHandle, RoomParams, Who};
use crate::store::{hash_token, now_ms, GameRecord, StoreEvent};

/// A room as the registry knows it: how to reach it and its latest summary.
#[derive(Clone)]
pub struct RoomEntry {
    /// Commands.
    pub handle: RoomHandle,
    /// Published by the room after every change.
    pub summary: Arc<Latest<RoomSummary>>,
}

/// An identity that outlives connections.
pub struct Session {
    /// Public id.
    pub player_id: Arc<str>,
    /// SHA-256 of the secret token (hex): the token itself is never kept.
    pub token_hash: String,
    /// Display name.
    pub name: Mutex<Arc<str>>,
    /// The connection using it now.
    pub conn: Mutex<Option<ClientHandle>>,
    /// Rooms where it holds (or held) a seat.
    pub seats: Mutex<HashSet<Arc<str>>>,
    /// Last time a connection used it or left it.
    pub last_seen: Mutex<Instant>,
    /// Whether it has been written to the store (it took a seat, or was restored from it).
    pub stored: AtomicBool,
}

impl Session {
    /// Current name.
    pub fn name(&self) -> Arc<str> {
        self.name.lock().clone()
    }
    /// Installs `client` as the session's connection, returning the one it replaces.
    pub fn attach(&self, client: ClientHandle) -> Option<ClientHandle> {
        *self.last_seen.lock() = Instant::now();
        self.conn.lock().replace(client)
    }
    /// Forgets the connection if it is still `conn_id`.
    pub fn detach(&self, conn_id: u64) {
        let mut conn = self.conn.lock();
        if conn.as_ref().is_some_and(|c| c.conn_id == conn_id) {
            *conn = None;
        }
        *self.last_seen.lock() = Instant::now();
    }
    /// Rooms where it holds a seat.
    pub fn seats(&self) -> Vec<Arc<str>> {
        self.seats.lock().iter().cloned().collect()
    }
    /// Notes a seat.
    pub fn add_seat(&self, room: Arc<str>) {
        self.seats.lock().insert(room);
    }
    /// Forgets a seat.
    pub fn remove_seat(&self, room: &str) {
        self.seats.lock().remove(room);
    }
    /// Sets the name.
    pub fn set_name(&self, name: Arc<str>) {
        *self.name.lock() = name;
    }
}

/// The open rooms, by id: what rooms report to.
#[derive(Default)]
struct Rooms {
    /// Rooms open at most at once.
    max_rooms: usize,
    /// Unfinished rooms one player may have created.
    player_caps: Mutex<PlayerCaps>,
    /// Hashed with ahash, not SipHash (a lookup per room command; ids are server-made).
    map: DashMap<Arc<str>, RoomEntry, ahash::RandomState>,
    /// Rooms closed since the lobby feed last looked.
    closed: Mutex<Vec<Arc<str>>>,
    /// Rooms claimed and not yet in `map` (each an [`Opening`]): counted against `max_rooms`.
    opening: std::sync::atomic::AtomicUsize,
    /// Finished rooms of `map` told to close to make way for new ones ([`Rooms::claim`]): no
    /// longer counted against `max_rooms`. Locked before `map` is touched, so that a room
    /// leaves this set and the map in one step.
    closing: Mutex<HashSet<Arc<str>>>,
    /// The unfinished rooms each player has created.
    claims: Mutex<Claims>,
    /// The store rooms record to (for the fence of a new room in a cluster).
    store_ref: std::sync::OnceLock<Arc<dyn crate::store::Store>>,
    /// The cluster this node is part of, if any.
    cluster: std::sync::OnceLock<Arc<Link>>,
}

impl Rooms {
    /// Counts a new room `id` created by `creator` from address `ip` (counted as its
    /// [`crate::peers::key`]; `None`: unknown, counted for no address), unless the server has
    /// `max_rooms` rooms and none of them finished, or the creator or its address as many
    /// unfinished rooms as its [`PlayerCaps`] allow. In a cluster, also takes the room's lease
    /// and notes it for the creator's caps on the other nodes, in the background (the
    /// [`Opening`]'s `noting`).
    fn claim(
        &self,
        id: Arc<str>,
        creator: &Arc<str>,
        matchup: Matchup,
        elsewhere: Counts,
        ip: Option<IpAddr>,
    ) -> Result<Opening<'_>, ProtoError> {
        let caps = *self.player_caps.lock();
        let mut claims = self.claims.lock();
        // Under the claims' lock, so that the check and the count are one step for creations
        // racing on other threads. Counted in `opening` until its task starts (an `Opening`).
        let mut closing = self.closing.lock();
        let open = self.map.len() + self.opening.load(Ordering::Relaxed);
        // At the cap a finished room makes way: its game is recorded, so only its watchers
        // lose anything, while a refusal would let rooms nobody plays in (a client creating
        // and finishing games quickly) keep everyone else from playing.
        let make_way = if open.saturating_sub(closing.len()) >= self.max_rooms {
            Some(self.finished_room(&closing).ok_or_else(|| {
                ProtoError::new(
                    ErrorCode::TooManyRooms,
                    "the server has as many rooms as it allows; try again later",
                )
            })?)
        } else {
            None
        };
        let ip = ip.map(crate::peers::key);
        claims.claim(&caps, id.clone(), creator, matchup, elsewhere, ip)?;
        if let Some(room) = make_way {
            tracing::info!(room = %room.id, "finished room closed for a new one (limits.max_rooms)");
            closing.insert(room.id.clone());
            room.reclaim();
        }
        self.opening.fetch_add(1, Ordering::Relaxed);
        drop(closing);
        drop(claims);
        let noting = self.owned(&id, creator, matchup);
        Ok(Opening {
            rooms: self,
            id,
            noting,
            opened: false,
        })
    }

    /// A finished room of this node, not already closing, to close for a new one: one nobody is
    /// in (no spectator, no player connected) if there is one, else any.
    fn finished_room(&self, closing: &HashSet<Arc<str>>) -> Option<RoomHandle> {
        let mut occupied = None;
        for entry in self.map.iter() {
            if !entry.handle.is_local() || closing.contains(entry.key()) {
                continue;
            }
            let (finished, empty) = entry.summary.read(|s| {
                let connected = |p: &Option<PlayerInfo>| {
                    p.as_ref().is_some_and(|p| p.kind == "human" && p.connected)
                };
                let empty =
                    s.spectators == 0 && !connected(&s.players.x) && !connected(&s.players.o);
                (s.status == RoomStatus::Finished, empty)
            });
            if finished && empty {
                return Some(entry.handle.clone());
            }
            if finished && occupied.is_none() {
                occupied = Some(entry.handle.clone());
            }
        }
        occupied
    }

    /// Uncounts room `id` (here, and in a cluster for every node).
    fn release(&self, id: &str) {
        if let (Some(player), Some(link)) = (self.claims.lock().release(id), self.cluster.get()) {
            link.drop_claim(&player, id);
        }
    }

    /// In a cluster, a new room `id` is this node's: its fence is raised before its first
    /// event (the store keeps order), its lease taken, then it is noted for `creator`'s caps
    /// (`Link::take_new`, whose handle this returns).
    fn owned(
        &self,
        id: &str,
        creator: &str,
        matchup: Matchup,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let link = self.cluster.get()?;
        drop(self.store().record(StoreEvent::Owner {
            room_id: id.to_string(),
            node: link.node.to_string(),
        }));
        Some(link.take_new(id, creator, matchup))
    }

    /// Gives back room `id`, claimed but never started: uncounted, and in a cluster its lease
    /// and fence let go.
    fn abandon(&self, id: &str) {
        self.release(id);
        if let Some(link) = self.cluster.get() {
            self.store().release_room(id);
            link.release(id);
        }
    }

    fn store(&self) -> &Arc<dyn crate::store::Store> {
        self.store_ref
            .get()
            .expect("the lobby sets the store at start")
    }
}

impl room::Registry for Rooms {
    fn open_held(
        &self,
        ctx: &Arc<RoomContext>,
        by: &Arc<str>,
        ip: Option<IpAddr>,
        params: RoomParams,
    ) -> Result<RoomHandle, ProtoError> {
        if ctx.shutdown.is_cancelled() {
            return Err(ProtoError::new(
                ErrorCode::ShuttingDown,
                "the server is shutting down",
            ));
        }
        let id = new_room_id();
        // The lease and the note for the caps land in the background (a pairing's players
        // hear of the room through `paired` and join it, which waits for nothing of these).
        let opening = self.claim(id.clone(), by, params.matchup(), Counts::default(), ip)?;
        let handle = room::spawn_held(ctx, id, params, |handle, summary| {
            self.map
                .insert(handle.id.clone(), RoomEntry { handle, summary });
        });
        opening.opened();
        Ok(handle)
    }
    fn game_finished(&self, id: &str) {
        self.release(id);
    }
    fn room_closed(&self, id: &str) {
        self.release(id);
        let removed = {
            let mut closing = self.closing.lock();
            closing.remove(id);
            self.map.remove(id)
        };
        if let Some((id, _)) = removed {
            if let Some(link) = self.cluster.get() {
                self.store().release_room(&id);
                link.release(&id);
                link.forget_room(&id);
            }
            self.closed.lock().push(id);
        }
    }
}

/// A room claimed ([`Rooms::claim`]) whose task has not started yet: counted in `opening`
/// (against `max_rooms`) until it is in the map, and given back if it never starts (the future
/// that opens it dropped on the way).
struct Opening<'a> {
    rooms: &'a Rooms,
    id: Arc<str>,
    /// In a cluster: the task taking the room's lease and noting it for its creator's caps.
    noting: Option<tokio::task::JoinHandle<()>>,
    opened: bool,
}

impl Opening<'_> {
    /// The room's task started (it is in the map).
    fn opened(mut self) {
        self.opened = true;
    }
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.rooms.opening.fetch_sub(1, Ordering::Relaxed);
        if !self.opened {
            self.rooms.abandon(&self.id);
        }
    }
}

/// A new room id: ten hex digits of a random UUID.
fn new_room_id() -> Arc<str> {
    uuid::Uuid::new_v4().simple().to_string()[..10].into()
}

/// Rooms and sessions.
pub struct Lobby {
    rooms: Arc<Rooms>,
    /// By token hash.
    sessions: DashMap<String, Arc<Session>>,
    /// Connections that asked for `lobby_update`s, by connection id.
    watchers: DashMap<u64, ClientHandle>,
    /// What every room it opens is given.
    rooms_ctx: Arc<RoomContext>,
    /// Rooms other nodes of a cluster run, as their lobby frames said.
    remote: DashMap<Arc<str>, RemoteRoom, ahash::RandomState>,
    /// Changes of remote rooms not yet told to this node's watchers.
    remote_changes: Mutex<(Vec<Listed>, Vec<String>)>,
    /// Set when every local room must be published again (Redis came back).
    republish: AtomicBool,
}

impl Lobby {
    /// A lobby with no rooms and no sessions, opening at most `max_rooms` rooms at once, each
    /// with the context `context` makes from the registry they report to (the lobby's own).
    pub fn new(
        max_rooms: usize,
        context: impl FnOnce(Arc<dyn room::Registry>) -> RoomContext,
    ) -> Lobby {
        let rooms = Arc::new(Rooms {
            max_rooms,
            player_caps: Mutex::new(PlayerCaps::NONE),
            ..Rooms::default()
        });
        let rooms_ctx = Arc::new(context(rooms.clone()));
        let _ = rooms.store_ref.set(rooms_ctx.store.clone());
        Lobby {
            rooms_ctx,
            rooms,
            sessions: DashMap::new(),
            watchers: DashMap::new(),
            remote: DashMap::default(),
            remote_changes: Mutex::default(),
            republish: AtomicBool::new(false),
        }
    }
    /// Makes this lobby one node's of a cluster: new rooms are fenced and leased through
    /// `link`, and rooms of other nodes are reached through it.
    pub fn join_cluster(&self, link: Arc<Link>) {
        let _ = self.rooms.cluster.set(link);
    }
    /// The cluster link, in a cluster.
    pub fn cluster(&self) -> Option<&Arc<Link>> {
        self.rooms.cluster.get()
    }
    /// The ids of the rooms this node runs.
    pub fn local_room_ids(&self) -> Vec<Arc<str>> {
        self.rooms.map.iter().map(|e| e.key().clone()).collect()
    }
    /// The same lobby, refusing a player more unfinished rooms than `caps`.
    pub fn with_player_caps(self, caps: PlayerCaps) -> Lobby {
        *self.rooms.player_caps.lock() = caps;
        self
    }
    /// A room by id.
    pub fn room(&self, id: &str) -> Option<RoomEntry> {
        self.rooms.map.get(id).map(|e| e.value().clone())
    }
    fn register(&self) -> impl FnOnce(RoomHandle, room::Summary) + '_ {
        |handle, summary| {
            self.rooms
                .map
                .insert(handle.id.clone(), RoomEntry { handle, summary });
        }
    }
    /// Checks `create_room` parameters (board bounds, rule, bot levels, time control).
    #[allow(clippy::too_many_arguments)]
    pub fn check_params(
        &self,
        game: &str,
        width: Option<i64>,
        height: Option<i64>,
        rule: Option<&str>,
        x: &SeatSpec,
        o: &SeatSpec,
        time_control: Option<&serde_json::Value>,
    ) -> Result<RoomParams, ProtoError> {
        room::check_params(
            &self.rooms_ctx,
            game,
            width,
            height,
            rule,
            x,
            o,
            time_control,
        )
    }
    /// Opens a room with `creator` in it and registers it; the room sends `room_joined` itself.
    /// Returns the room's handle and the creator's seat. Refused while the server has
    /// `max_rooms` rooms and none of them finished, or the creator (by player id, whatever its
    /// connection) as many unfinished rooms of that kind as its [`PlayerCaps`] allow, or its
    /// address (this node's rooms only) as many as `limits.rooms_per_ip`.
    pub fn open_room(
        &self,
        creator: Who,
        params: RoomParams,
        re: Option<Value>,
    ) -> Result<(RoomHandle, Joined), ProtoError> {
        let opening = self.claim_new(&creator, &params, Counts::default())?;
        let room = self.spawn_room(opening.id.clone(), creator, params, re);
        opening.opened();
        Ok(room)
    }
    /// [`Lobby::open_room`], with the creator's unfinished rooms on other nodes of a cluster
    /// (`elsewhere`) counted against its caps too. In a cluster the room starts (and its
    /// creator hears of it) once it is noted for the creator's caps, so that a `create_room`
    /// of the same player on another node right after counts it; a Redis that does not answer
    /// within a lease holds the room up no longer.
    pub async fn open_room_counting(
        &self,
        creator: Who,
        params: RoomParams,
        re: Option<Value>,
        elsewhere: Counts,
    ) -> Result<(RoomHandle, Joined), ProtoError> {
        let mut opening = self.claim_new(&creator, &params, elsewhere)?;
        if let (Some(noting), Some(link)) = (opening.noting.take(), self.cluster()) {
            let _ = tokio::time::timeout(link.lease, noting).await;
        }
        let room = self.spawn_room(opening.id.clone(), creator, params, re);
        opening.opened();
        Ok(room)
    }
    /// A new room, counted against the limits (see [`Rooms::claim`]).
    fn claim_new(
        &self,
        creator: &Who,
        params: &RoomParams,
        elsewhere: Counts,
    ) -> Result<Opening<'_>, ProtoError> {
        if self.rooms_ctx.shutdown.is_cancelled() {
            return Err(ProtoError::new(
                ErrorCode::ShuttingDown,
                "the server is shutting down",
            ));
        }
        let id = new_room_id();
        // Counted before the task starts, so that its end (reported by the task) finds it.
        self.rooms.claim(
            id,
            &creator.player_id,
            params.matchup(),
            elsewhere,
            creator.ip,
        )
    }
    /// Starts claimed room `id`.
    fn spawn_room(
        &self,
        id: Arc<str>,
        creator: Who,
        params: RoomParams,
        re: Option<Value>,
    ) -> (RoomHandle, Joined) {
        room::spawn(&self.rooms_ctx, id, creator, params, re, self.register())
    }
    /// Opens a room whose seats are held for their players or bots (a pairing), counted as
    /// created by `by` (its player, and its connection's address), under the same limits as
    /// [`Lobby::open_room`].
    pub fn open_held(&self, by: &Who, params: RoomParams) -> Result<RoomHandle, ProtoError> {
        room::Registry::open_held(&*self.rooms, &self.rooms_ctx, &by.player_id, by.ip, params)
    }
    /// Sends `bytes` to every lobby watcher.
    pub fn tell_watchers(&self, bytes: &tokio_tungstenite::tungstenite::Utf8Bytes) {
        for w in self.watchers.iter() {
            w.value().send(bytes.clone());
        }
    }
    /// Re-opens the room of an unfinished stored game after a restart (see [`room::restore`]).
    pub fn restore_room(&self, record: &GameRecord) -> Result<Arc<str>, caro_engine::RulesError> {
        room::restore(&self.rooms_ctx, record, self.register())
    }
    /// Asks every room task to stop (server shutdown).
    pub fn stop_rooms(&self) {
        for e in self.rooms.map.iter() {
            e.handle.stop();
        }
    }
    /// Open rooms.
    pub fn room_count(&self) -> usize {
        self.rooms.map.len()
    }
    /// Every room's summary, oldest id first is not promised: sorted by id for stable output.
    pub fn summaries(&self) -> Vec<RoomSummary> {
        let mut v: Vec<RoomSummary> = self
            .rooms
            .map
            .iter()
            .map(|e| e.value().summary.read(RoomSummary::clone))
            .collect();
        v.sort_by(|a, b| a.room_id.cmp(&b.room_id));
        v
    }
    /// At most `limit` summaries of the rooms whose id comes after `after` (all if `None`),
    /// sorted by id, and the id to ask the next page after if more rooms follow. A room that
    /// opens between two pages shows in a later page only if its id sorts after the cursor; the
    /// lobby feed (`lobby_update`) reports it either way.
    pub fn summaries_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> (Vec<Listed>, Option<String>) {
        let keep = |id: &str| after.map_or(true, |a| id > a);
        let mut v: Vec<(Arc<str>, Listed)> = self
            .rooms
            .map
            .iter()
            .filter(|e| keep(e.key()))
            .map(|e| {
                let summary = e.value().summary.read(RoomSummary::clone);
                (e.key().clone(), Listed::Here(Box::new(summary)))
            })
            .collect();
        v.extend(
            self.remote
                .iter()
                .filter(|e| keep(e.key()) && !self.rooms.map.contains_key(e.key()))
                .map(|e| (e.key().clone(), Listed::Elsewhere(e.summary.clone()))),
        );
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let next = (v.len() > limit).then(|| v[limit - 1].0.to_string());
        v.truncate(limit);
        (v.into_iter().map(|(_, l)| l).collect(), next)
    }
    /// Sends `client` the `lobby_update`s from now on.
    pub fn watch(&self, client: ClientHandle) {
        self.watchers.insert(client.conn_id, client);
    }
    /// Stops the `lobby_update`s to a connection (also when it closes).
    pub fn unwatch(&self, conn_id: u64) {
        self.watchers.remove(&conn_id);
    }
    /// The session of a token.
    pub fn session(&self, token: &str) -> Option<Arc<Session>> {
        self.sessions
            .get(&hash_token(token))
            .map(|s| s.value().clone())
    }
    /// The session of a token's hash.
    pub fn session_by_hash(&self, token_hash: &str) -> Option<Arc<Session>> {
        self.sessions.get(token_hash).map(|s| s.value().clone())
    }
    /// A new identity with a random token; returns the session and the token (which only the
    /// client keeps).
    pub fn new_session(&self, name: Arc<str>) -> (Arc<Session>, String) {
        let token =
            uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string();
        let player_id: Arc<str> =
            format!("p{}", &uuid::Uuid::new_v4().simple().to_string()[..12]).into();
        let s = self.insert_session(hash_token(&token), player_id, name, HashSet::new(), false);
        (s, token)
    }
    /// A new session with a random token for an existing player id (an account's login).
    pub fn new_session_for(&self, player_id: Arc<str>, name: Arc<str>) -> (Arc<Session>, String) {
        let token =
            uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string();
        let s = self.insert_session(hash_token(&token), player_id, name, HashSet::new(), false);
        (s, token)
    }
    /// Forgets every session of `player_id` (an account's `logout_everywhere`), returning them.
    pub fn forget_player(&self, player_id: &str) -> Vec<Arc<Session>> {
        let mut gone = Vec::new();
        self.sessions.retain(|_, s| {
            let keep = &*s.player_id != player_id;
            if !keep {
                gone.push(s.clone());
            }
            keep
        });
        self.rooms_ctx
            .metrics
            .sessions
            .fetch_sub(gone.len() as u64, Ordering::Relaxed);
        gone
    }
    /// A session restored from the store after a restart, holding seats in `seats`.
    pub fn restore_session(
        &self,
        token_hash: String,
        player_id: Arc<str>,
        name: Arc<str>,
        seats: HashSet<Arc<str>>,
    ) -> Arc<Session> {
        self.insert_session(token_hash, player_id, name, seats, true)
    }
    fn insert_session(
        &self,
        token_hash: String,
        player_id: Arc<str>,
        name: Arc<str>,
        seats: HashSet<Arc<str>>,
        stored: bool,
    ) -> Arc<Session> {
        let s = Arc::new(Session {
            player_id,
            token_hash: token_hash.clone(),
            name: Mutex::new(name),
            conn: Mutex::new(None),
            seats: Mutex::new(seats),
            last_seen: Mutex::new(Instant::now()),
            stored: AtomicBool::new(stored),
        });
        if self.sessions.insert(token_hash, s.clone()).is_none() {
            self.rooms_ctx
                .metrics
                .sessions
                .fetch_add(1, Ordering::Relaxed);
        }
        s
    }
    /// Sessions in memory.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }
    /// `session` takes (or is about to take) a seat: it is written to the store, so that a
    /// restart can give it back its seat. Written at every seat, not only the first: the row's
    /// `updated_at` is what the running purge goes by ([`janitor`]). Not awaited: the store's
    /// writer keeps order, so the row is durable no later than the game events queued after it.
    pub fn seated(&self, session: &Session) {
        session.stored.store(true, Ordering::Relaxed);
        self.write_session(session);
    }
    /// `session` was renamed: the store's copy follows if there is one (a session never seated
    /// has none and gets none).
    pub fn renamed(&self, session: &Session) {
        if session.stored.load(Ordering::Relaxed) {
            self.write_session(session);
        }
    }
    fn write_session(&self, session: &Session) {
        drop(self.rooms_ctx.store.record(StoreEvent::Session {
            token_hash: session.token_hash.clone(),
            player_id: session.player_id.to_string(),
            name: session.name().to_string(),
        }));
    }
    /// Forgets sessions with no connection and no seat in an open room: after `ttls.idle` if
    /// they never took a seat, after `ttls.seated` if they did.
    pub fn purge_sessions(&self, ttls: SessionTtls) {
        let now = Instant::now();
        let before = self.sessions.len();
        self.sessions.retain(|_, s| {
            if s.conn.lock().is_some() {
                return true;
            }
            if s.seats().iter().any(|r| self.rooms.map.contains_key(r)) {
                return true;
            }
            let ttl = if s.stored.load(Ordering::Relaxed) {
                ttls.seated
            } else {
                ttls.idle
            };
            now.duration_since(*s.last_seen.lock()) < ttl
        });
        let gone = before.saturating_sub(self.sessions.len());
        self.rooms_ctx
            .metrics
            .sessions
            .fetch_sub(gone as u64, Ordering::Relaxed);
    }
}

/// How long a session without a connection or a seat in an open room is kept.
#[derive(Clone, Copy, Debug)]
pub struct SessionTtls {
    /// Never seated (`server.session_idle_ttl_ms`): it has no row, only memory.
    pub idle: Duration,
    /// Seated at least once (`server.session_ttl_ms`); also the age of a row that no
    /// unfinished game seats before the store deletes it.
    pub seated: Duration,
}

/// Every quarter of the shorter ttl (within 100 ms..=60 s), until `shutdown`: forgets the
/// expired sessions, and has the store delete the rows that no unfinished game seats and that
/// were last written more than `ttls.seated` ago (the rows a restart would delete too; see
/// docs/persistence.md).
pub async fn janitor(lobby: Arc<Lobby>, ttls: SessionTtls, shutdown: CancellationToken) {
    let period =
        (ttls.idle.min(ttls.seated) / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        lobby.purge_sessions(ttls);
        let updated_before = now_ms() - ttls.seated.as_millis() as i64;
        drop(
            lobby
                .rooms_ctx
                .store
                .record(StoreEvent::SessionsExpired { updated_before }),
        );
    }
}

/// The lobby feed: every `period` (`rooms.lobby_update_ms`), the rooms that opened, changed or
/// closed since the last look go to every watcher as one `lobby_update`, serialized once. It
/// reads each room's published summary when its version has moved, so rooms do no extra work for
/// it. Until `shutdown`.
pub async fn feed(lobby: Arc<Lobby>, period: Duration, shutdown: CancellationToken) {
    // Each room's summary as last looked at, and its version then.
    let mut seen: std::collections::HashMap<Arc<str>, (Arc<Latest<RoomSummary>>, u64)> =
        std::collections::HashMap::new();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        // Every room closed since the last look, even one that opened and closed between two
        // looks (a watcher may have it from its `room_list`). Taken before the pass over the
        // open rooms, so a room closing during the pass is removed in the next update, after
        // this one's summary of it, never before.
        let mut removed: Vec<String> = std::mem::take(&mut *lobby.rooms.closed.lock())
            .into_iter()
            .map(|id| {
                seen.remove(&id);
                id.to_string()
            })
            .collect();
        // Every local summary again when the cluster's copy was lost.
        if lobby.republish.swap(false, Ordering::Relaxed) {
            seen.clear();
        }
        let mut rooms = Vec::new();
        for entry in lobby.rooms.map.iter() {
            match seen.get_mut(entry.key()) {
                Some((latest, version)) if latest.version() == *version => {}
                Some((latest, version)) => {
                    let (summary, now) = latest.get();
                    *version = now;
                    rooms.push(summary);
                }
                None => {
                    let latest = entry.value().summary.clone();
                    // A room's summary is whole from the start (`room::spawn` registers it
                    // built), so a room seen for the first time is listed at once.
                    let (summary, version) = latest.get();
                    rooms.push(summary);
                    seen.insert(entry.key().clone(), (latest, version));
                }
            }
        }
        rooms.sort_by(|a, b| a.room_id.cmp(&b.room_id));
        removed.sort();
        removed.dedup();
        if let Some(link) = lobby.cluster() {
            if !rooms.is_empty() || !removed.is_empty() {
                link.publish_lobby(&rooms, &removed);
            }
        }
        let mut rooms: Vec<Listed> = rooms
            .into_iter()
            .map(|r| Listed::Here(Box::new(r)))
            .collect();
        {
            let (remote_rooms, remote_removed) = &mut *lobby.remote_changes.lock();
            rooms.append(remote_rooms);
            removed.append(remote_removed);
        }
        // The changes are followed even while nobody watches (a pass over the rooms a tick),
        // so that a new watcher's first update holds what changed after its `room_list`.
        if (rooms.is_empty() && removed.is_empty()) || lobby.watchers.is_empty() {
            continue;
        }
        let bytes = encode(&ServerMsg::LobbyUpdate { rooms, removed }, None);
        for w in lobby.watchers.iter() {
            w.value().send(bytes.clone());
        }
    }
}
