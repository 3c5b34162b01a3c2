//! # caro-arena server
//!
//! A tokio WebSocket server where people play Caro and tic-tac-toe against each other or against
//! bots, and watch games live. The library exposes [`run`] so that `main.rs` stays thin and tests
//! start real servers on port 0.
//!
//! The tree mirrors the architecture: [`http`] accepts a TCP stream and serves it with axum (the
//! API, the browser client) or, after a WebSocket upgrade, hands it to tokio-tungstenite; each
//! WebSocket is served by one [`connection`] task (reader + writer with a bounded queue), which
//! everyone else reaches through a [`client::ClientHandle`];
//! the [`lobby`] keeps the room registry and sessions and opens rooms; each [`room`] is one task
//! that owns its board and knows only its [`room::RoomContext`], never the [`Server`]; [`bot`] is
//! the only bridge to the engine (and, through [`outside`], to outside Gomocup engines run as
//! child processes); rooms hand their game records to a [`store`] (SQLite by default), which
//! makes each move durable before it is announced and gives back the unfinished games at start.
//!
//! Imports run one way: `connection` -> `lobby` -> `room` -> `client`, `store`, `bot`; a room
//! reports its end to the lobby through the [`room::Registry`] trait, not by importing it.

pub mod accounts;
pub mod analysis;
pub mod bot;
pub mod client;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod http;
pub mod latest;
pub mod lobby;
pub mod metrics;
pub mod names;
pub mod outside;
pub mod pairing;
pub mod peers;
pub mod protocol;
pub mod ratings;
pub mod room;
pub mod signal;
pub mod store;

use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use dashmap::DashMap;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bot::BotPool;
use crate::client::{ClientHandle, CLOSE_GOING_AWAY};
use crate::config::Config;
use crate::lobby::Lobby;
use crate::metrics::Metrics;
use crate::room::{RoomContext, RoomSettings};
use crate::store::Store;

/// Everything the tasks of one server share. Rooms never see it (they get a
/// [`room::RoomContext`]); connections and the HTTP edge do.
pub struct Server {
    /// Validated settings.
    pub config: Config,
    /// Rooms and sessions.
    pub lobby: Arc<Lobby>,
    /// Open seeks (quick pairing).
    pub pairing: Arc<pairing::Pairing>,
    /// Bot levels and the search scheduler.
    pub bots: Arc<BotPool>,
    /// Game records.
    pub store: Arc<dyn Store>,
    /// Post-game analyses running (issue 18).
    pub analyses: Arc<analysis::Analyses>,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// Cancelled when the server stops.
    pub shutdown: CancellationToken,
    /// Every task the server spawns, waited for at shutdown.
    pub tracker: TaskTracker,
    /// Bounds simultaneous connections.
    pub connection_permits: Arc<Semaphore>,
    /// Connections and upgrades per client address.
    pub peers: peers::Peers,
    /// Accounts and the tokens bound to them (loaded at start by `run`).
    pub accounts: Arc<accounts::Accounts>,
    /// Every account's ratings and the bots' (docs/ratings.md).
    pub ratings: Arc<ratings::Ratings>,
    /// Every open WebSocket connection, by id: the shutdown closes them.
    connections: DashMap<u64, ClientHandle>,
    next_id: AtomicU64,
}

/// What rooms play by, from the config.
fn room_settings(config: &Config) -> RoomSettings {
    RoomSettings {
        grace: config.rooms.grace,
        absent_cap: config.rooms.absent_cap,
        crowd_update: config.rooms.crowd_update,
        finished_ttl: config.rooms.finished_ttl,
        empty_ttl: config.rooms.empty_ttl,
        unwatched_bot_game: config.rooms.unwatched_bot_game,
        history_events: config.rooms.history_events,
        chat_history: config.chat.history,
        send_queue: config.limits.send_queue,
        max_spectators: config.limits.max_spectators,
        min_board: config.limits.min_board,
        max_board: config.limits.max_board,
        idle_move: config.rooms.idle_move,
        min_clock_ms: config.limits.min_clock_ms,
        max_clock_ms: config.limits.max_clock_ms,
        max_increment_ms: config.limits.max_increment_ms,
    }
}

impl Server {
    /// Shared state for a server with `config` and `store`.
    pub fn new(config: Config, store: Arc<dyn Store>) -> Arc<Server> {
        let metrics = Arc::new(Metrics::default());
        let tracker = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let bots = Arc::new(BotPool::new(
            config.bots.clone(),
            config.search.clone(),
            metrics.clone(),
            tracker.clone(),
            shutdown.clone(),
        ));
        let accounts = Arc::new(accounts::Accounts::new(store.clone(), &config.limits));
        let ratings = Arc::new(ratings::Ratings::new(
            config.ratings.clone(),
            &config.bots,
            accounts.clone(),
        ));
        let lobby = Arc::new(
            Lobby::new(config.limits.max_rooms, |registry| RoomContext {
                settings: room_settings(&config),
                store: store.clone(),
                bots: bots.clone(),
                ratings: ratings.clone(),
                metrics: metrics.clone(),
                shutdown: shutdown.clone(),
                tracker: tracker.clone(),
                registry,
            })
            .with_player_caps((&config.limits).into()),
        );
        let pairing = Arc::new(pairing::Pairing::new(
            lobby.clone(),
            ratings.clone(),
            tracker.clone(),
            shutdown.clone(),
        ));
        Arc::new(Server {
            connection_permits: Arc::new(Semaphore::new(config.limits.max_connections)),
            peers: peers::Peers::new(&config.limits),
            accounts,
            ratings,
            connections: DashMap::new(),
            analyses: Arc::new(analysis::Analyses::new(config.analysis.clone())),
            config,
            lobby,
            pairing,
            bots,
            store,
            metrics,
            shutdown,
            tracker,
            next_id: AtomicU64::new(1),
        })
    }

    /// A number unique in this server (connection ids).
    pub fn next_id(&self) -> u64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Registers an open connection, for the shutdown to close.
    pub(crate) fn add_connection(&self, client: ClientHandle) {
        self.connections.insert(client.conn_id, client);
    }

    /// An open connection of this node, by id.
    pub(crate) fn connection(&self, conn_id: u64) -> Option<ClientHandle> {
        self.connections.get(&conn_id).map(|c| c.clone())
    }

    /// Forgets a closed connection.
    pub(crate) fn remove_connection(&self, conn_id: u64) {
        self.connections.remove(&conn_id);
    }
}

/// Serves on `listener` until `shutdown` completes, with the store `config.store` names
/// (opened and migrated first; an error there is returned, never ignored). See
/// [`run_with_store`].
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let settings = config.store.clone();
    let store = tokio::task::spawn_blocking(move || store::open(&settings))
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| {
            std::io::Error::other(format!(
                "cannot open the game database {}: {e}",
                config.store.describe()
            ))
        })?;
    run_with_store(listener, config, store, shutdown).await
}

/// Serves HTTP and WebSocket on `listener` until `shutdown` completes; then stops accepting,
/// closes every connection with 1001, lets rooms finish their current work, waits for every task
/// (up to `server.shutdown_timeout_ms`), flushes the store and returns. Unfinished games in the
/// store are restored into rooms before the first connection is accepted.
pub async fn run_with_store(
    listener: TcpListener,
    config: Config,
    store: Arc<dyn Store>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let server = Server::new(config, store);
    let cluster = match &server.config.cluster {
        None => None,
        Some(c) => {
            let (link, out) = cluster::Link::connect(c, server.metrics.clone())
                .await
                .map_err(|e| std::io::Error::other(format!("cannot reach Redis: {e}")))?;
            server.lobby.join_cluster(link.clone());
            tracing::info!(node = %link.node, "cluster node");
            Some((link, out))
        }
    };
    // A cluster node renews its leases (and hears the others) while it restores: a restore
    // longer than a lease must not let other nodes take the games it has restored.
    if let Some((link, out)) = cluster {
        cluster::node::start(&server, link, out);
    }
    restore(&server).await?;
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "listening");
    }
    server.tracker.spawn(lobby::janitor(
        server.lobby.clone(),
        lobby::SessionTtls {
            idle: server.config.server.session_idle_ttl,
            seated: server.config.server.session_ttl,
        },
        server.shutdown.clone(),
    ));
    server.tracker.spawn(lobby::feed(
        server.lobby.clone(),
        server.config.rooms.lobby_update,
        server.shutdown.clone(),
    ));
    let app = http::router(server.clone());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    server.tracker.spawn(http::handle(server.clone(), app.clone(), stream, peer));
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
        }
    }
    tracing::info!("shutting down");
    drop(listener);
    server.shutdown.cancel();
    // Connections and rooms wait on signals of their own, not on the token (see `signal`).
    for c in server.connections.iter() {
        c.close(CLOSE_GOING_AWAY, "server shutting down");
    }
    server.lobby.stop_rooms();
    server.tracker.close();
    if tokio::time::timeout(server.config.server.shutdown_timeout, server.tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("some tasks did not finish in time");
    }
    server.bots.close().await;
    let store = server.store.clone();
    let _ = tokio::task::spawn_blocking(move || store.flush()).await;
    tracing::info!("stopped");
    Ok(())
}

/// Notes room `id` as a seat of each player of `game`.
fn add_seats(
    seats: &mut std::collections::HashMap<String, std::collections::HashSet<Arc<str>>>,
    game: &store::GameRecord,
    id: &Arc<str>,
) {
    for p in [&game.summary.players.x, &game.summary.players.o] {
        if let store::SeatRecord::Human { player_id, .. } = p {
            seats
                .entry(player_id.clone())
                .or_default()
                .insert(id.clone());
        }
    }
}

/// Restores the store's unfinished games into rooms and the sessions seated in them, so players
/// who come back with their tokens find their games as they were.
async fn restore(server: &Arc<Server>) -> std::io::Result<()> {
    let store = server.store.clone();
    let restored = tokio::task::spawn_blocking(move || store.restore())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| std::io::Error::other(format!("cannot read unfinished games: {e}")))?;
    let store = server.store.clone();
    let accounts = tokio::task::spawn_blocking(move || store.accounts())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| std::io::Error::other(format!("cannot read accounts: {e}")))?;
    server.accounts.load(accounts);
    let store = server.store.clone();
    let ratings = tokio::task::spawn_blocking(move || store.ratings())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| std::io::Error::other(format!("cannot read ratings: {e}")))?;
    server.ratings.load(ratings);
    let mut seats: std::collections::HashMap<String, std::collections::HashSet<Arc<str>>> =
        std::collections::HashMap::new();
    for game in &restored.games {
        let id: Arc<str> = game.summary.id.as_str().into();
        // In a cluster, only the games whose lease this node wins run here (the others run
        // elsewhere; their players' seats still point at them).
        let mut fresh = None;
        if let Some(link) = server.lobby.cluster() {
            if !cluster::ownership::claim_at_start(server, link, &id).await {
                add_seats(&mut seats, game, &id);
                continue;
            }
            // Read again now that the fence is raised: the snapshot may be older than moves
            // another node committed (or a result) before this one won the lease.
            let store = server.store.clone();
            let key = id.to_string();
            match tokio::task::spawn_blocking(move || store.game(&key)).await {
                Ok(Ok(Some(g))) if g.summary.result.is_none() => fresh = Some(g),
                Ok(Ok(_)) => continue,
                _ => {
                    tracing::error!(game = %id, "cannot read a game to restore");
                    continue;
                }
            }
        }
        let game = fresh.as_ref().unwrap_or(game);
        match server.lobby.restore_room(game) {
            Ok(id) => add_seats(&mut seats, game, &id),
            Err(e) => tracing::error!(game = %game.summary.id, "cannot restore: {e}"),
        }
    }
    for s in restored.sessions {
        let rooms = seats.get(&s.player_id).cloned().unwrap_or_default();
        server
            .lobby
            .restore_session(s.token_hash, s.player_id.into(), s.name.into(), rooms);
    }
    if !restored.games.is_empty() {
        tracing::info!(games = restored.games.len(), "unfinished games restored");
    }
    Ok(())
}
