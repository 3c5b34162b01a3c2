//! The lobby: the room registry and the sessions (tokens), both DashMaps that are never held
//! across an `.await`. A session is an identity (player id, name, secret token) that outlives
//! connections, so a player who reconnects with the token gets their seats back.
//!
//! The lobby decides nothing about games: rooms do.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use tokio::time::Instant;

use crate::client::ClientHandle;
use crate::latest::Latest;
use crate::protocol::{encode, RoomSummary, ServerMsg};
use crate::room::RoomHandle;
use crate::store::hash_token;
use crate::Server;

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
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// Current name.
    pub fn name(&self) -> Arc<str> {
        lock(&self.name).clone()
    }
    /// Installs `client` as the session's connection, returning the one it replaces.
    pub fn attach(&self, client: ClientHandle) -> Option<ClientHandle> {
        *lock(&self.last_seen) = Instant::now();
        lock(&self.conn).replace(client)
    }
    /// Forgets the connection if it is still `conn_id`.
    pub fn detach(&self, conn_id: u64) {
        let mut conn = lock(&self.conn);
        if conn.as_ref().is_some_and(|c| c.conn_id == conn_id) {
            *conn = None;
        }
        *lock(&self.last_seen) = Instant::now();
    }
    /// Rooms where it holds a seat.
    pub fn seats(&self) -> Vec<Arc<str>> {
        lock(&self.seats).iter().cloned().collect()
    }
    /// Notes a seat.
    pub fn add_seat(&self, room: Arc<str>) {
        lock(&self.seats).insert(room);
    }
    /// Forgets a seat.
    pub fn remove_seat(&self, room: &str) {
        lock(&self.seats).remove(room);
    }
    /// Sets the name.
    pub fn set_name(&self, name: Arc<str>) {
        *lock(&self.name) = name;
    }
}

/// Rooms and sessions.
#[derive(Default)]
pub struct Lobby {
    /// Hashed with ahash, not SipHash (a lookup per room command; ids are server-made).
    rooms: DashMap<Arc<str>, RoomEntry, ahash::RandomState>,
    /// By token hash.
    sessions: DashMap<String, Arc<Session>>,
    /// Connections that asked for `lobby_update`s, by connection id.
    watchers: DashMap<u64, ClientHandle>,
    /// Rooms closed since the lobby feed last looked.
    closed: Mutex<Vec<Arc<str>>>,
}

impl Lobby {
    /// A room by id.
    pub fn room(&self, id: &str) -> Option<RoomEntry> {
        self.rooms.get(id).map(|e| e.value().clone())
    }
    /// Registers a room.
    pub fn insert_room(&self, entry: RoomEntry) {
        self.rooms.insert(entry.handle.id.clone(), entry);
    }
    /// Unregisters a room (called by the room task as it ends).
    pub fn remove_room(&self, id: &str) {
        if let Some((id, _)) = self.rooms.remove(id) {
            lock(&self.closed).push(id);
        }
    }
    /// Asks every room task to stop (server shutdown).
    pub fn stop_rooms(&self) {
        for e in self.rooms.iter() {
            e.handle.stop();
        }
    }
    /// Open rooms.
    pub fn room_count(&self) -> usize {
        self.rooms.len()
    }
    /// Every room's summary, oldest id first is not promised: sorted by id for stable output.
    pub fn summaries(&self) -> Vec<RoomSummary> {
        let mut v: Vec<RoomSummary> = self
            .rooms
            .iter()
            .map(|e| e.value().summary.read(RoomSummary::clone))
            .collect();
        v.sort_by(|a, b| a.room_id.cmp(&b.room_id));
        v
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
    /// A new identity with a random token; returns the session and the token (which only the
    /// client keeps).
    pub fn new_session(&self, name: Arc<str>) -> (Arc<Session>, String) {
        let token =
            uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string();
        let player_id: Arc<str> =
            format!("p{}", &uuid::Uuid::new_v4().simple().to_string()[..12]).into();
        let s = self.insert_session(hash_token(&token), player_id, name, HashSet::new());
        (s, token)
    }
    /// A session restored from the store after a restart, holding seats in `seats`.
    pub fn restore_session(
        &self,
        token_hash: String,
        player_id: Arc<str>,
        name: Arc<str>,
        seats: HashSet<Arc<str>>,
    ) -> Arc<Session> {
        self.insert_session(token_hash, player_id, name, seats)
    }
    fn insert_session(
        &self,
        token_hash: String,
        player_id: Arc<str>,
        name: Arc<str>,
        seats: HashSet<Arc<str>>,
    ) -> Arc<Session> {
        let s = Arc::new(Session {
            player_id,
            token_hash: token_hash.clone(),
            name: Mutex::new(name),
            conn: Mutex::new(None),
            seats: Mutex::new(seats),
            last_seen: Mutex::new(Instant::now()),
        });
        self.sessions.insert(token_hash, s.clone());
        s
    }
    /// Forgets sessions with no connection and no seat in an open room, idle for `ttl`.
    pub fn purge_sessions(&self, ttl: std::time::Duration) {
        let now = Instant::now();
        self.sessions.retain(|_, s| {
            if lock(&s.conn).is_some() {
                return true;
            }
            if s.seats().iter().any(|r| self.rooms.contains_key(r)) {
                return true;
            }
            now.duration_since(*lock(&s.last_seen)) < ttl
        });
    }
}

/// Periodically forgets expired sessions, until shutdown.
pub async fn janitor(server: Arc<Server>) {
    let period = (server.config.session_ttl / 4).clamp(
        std::time::Duration::from_millis(100),
        std::time::Duration::from_secs(60),
    );
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => server.lobby.purge_sessions(server.config.session_ttl),
        }
    }
}

/// The lobby feed: every `rooms.lobby_update_ms`, the rooms that opened, changed or closed since
/// the last look go to every watcher as one `lobby_update`, serialized once. It reads each
/// room's published summary when its version has moved, so rooms do no extra work for it.
/// Until shutdown.
pub async fn feed(server: Arc<Server>) {
    let lobby = &server.lobby;
    // Each room's summary as last looked at, and its version then.
    let mut seen: std::collections::HashMap<Arc<str>, (Arc<Latest<RoomSummary>>, u64)> =
        std::collections::HashMap::new();
    let mut tick = tokio::time::interval(server.config.lobby_update);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        // Every room closed since the last look, even one that opened and closed between two
        // looks (a watcher may have it from its `room_list`). Taken before the pass over the
        // open rooms, so a room closing during the pass is removed in the next update, after
        // this one's summary of it, never before.
        let mut removed: Vec<String> = std::mem::take(&mut *lock(&lobby.closed))
            .into_iter()
            .map(|id| {
                seen.remove(&id);
                id.to_string()
            })
            .collect();
        let mut rooms = Vec::new();
        for entry in lobby.rooms.iter() {
            match seen.get_mut(entry.key()) {
                Some((latest, version)) if latest.version() == *version => {}
                Some((latest, version)) => {
                    let (summary, now) = latest.get();
                    *version = now;
                    rooms.push(summary);
                }
                None => {
                    let latest = entry.value().summary.clone();
                    let (summary, version) = latest.get();
                    // A room registered before it published its first summary is new next time.
                    if !summary.game.is_empty() {
                        rooms.push(summary);
                        seen.insert(entry.key().clone(), (latest, version));
                    }
                }
            }
        }
        // The changes are followed even while nobody watches (a pass over the rooms a tick),
        // so that a new watcher's first update holds what changed after its `room_list`.
        if (rooms.is_empty() && removed.is_empty()) || lobby.watchers.is_empty() {
            continue;
        }
        rooms.sort_by(|a, b| a.room_id.cmp(&b.room_id));
        removed.sort();
        removed.dedup();
        let bytes = encode(&ServerMsg::LobbyUpdate { rooms, removed }, None);
        for w in lobby.watchers.iter() {
            w.value().send(bytes.clone());
        }
    }
}
