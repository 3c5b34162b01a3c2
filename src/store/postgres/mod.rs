//! The store several nodes share: a PostgreSQL database, with the SQLite store's contract
//! (`super`'s docs): a [`Commit`] resolves once its event is committed, and PostgreSQL's
//! `synchronous_commit = on` (its default; leave it on) means committed is flushed to the
//! server's WAL on disk.
//!
//! The driver is async (tokio-postgres behind a deadpool pool) while the [`Store`] trait is
//! synchronous (`record` queues, the reads block in `spawn_blocking`). So the store runs its own
//! small tokio runtime (one worker thread): the writer task and every query live there, and the
//! blocking methods wait on a std channel, which works from any thread, inside a runtime or not.
//!
//! Writing is group commit, as in SQLite: the writer task takes the first queued event, drains
//! whatever else is queued (up to [`MAX_BATCH`]), writes them all in one transaction and answers
//! every waiter once it is committed. A batch takes a connection from the pool, so after a lost
//! connection (a PostgreSQL restart) the next batch gets a new one: the batch that failed answers
//! its waiters with the error (their rooms close, nothing was acknowledged), later ones succeed.
//!
//! Statements are tolerant (`ON CONFLICT`, `WHERE EXISTS` for rows of a game), because in
//! PostgreSQL one failing statement aborts the whole transaction, other rooms' moves with it.
//!
//! The files: this one the store (pool, runtime, writer, reads); `write.rs` the statements of
//! each event; `schema.rs` the migrations; `ratings.rs` the reads of ratings; `testing.rs` a
//! fresh database per test.

mod ratings;
mod schema;
pub mod testing;
#[cfg(test)]
mod tests;
mod write;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use parking_lot::Mutex;
use tokio::sync::mpsc as tmpsc;
use tokio_postgres::{NoTls, Row};

use crate::protocol::{ChatChannel, ChatLine, Seat};

use super::writer::{answer, answer_each, Msg, Writer};
use super::{
    now_ms, AccountClaim, Commit, GamePlayers, GameQuery, GameRecord, GameSummary, MoveRecord,
    NewAccount, PlayerRecord, RatingHistoryRow, RatingRow, Restored, RestoredSession, SeatRecord,
    Store, StoreAccounts, StoreError, StoreEvent, StoredAccount,
};

pub use schema::{migrate, MIGRATIONS};
use write::{write_event, PURGE_SESSIONS};

/// The most events written in one transaction.
pub const MAX_BATCH: usize = 4096;

/// Connections in the pool (the writer's and the reads').
const POOL_SIZE: usize = 8;

/// How long a connection may take to open, and a query to wait for a free connection.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A PostgreSQL database behind a pool, with a writer task. See the module docs.
pub struct PostgresStore {
    tx: Writer<tmpsc::UnboundedSender<Msg>>,
    pool: Pool,
    handle: tokio::runtime::Handle,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    writer_done: Mutex<Option<mpsc::Receiver<()>>>,
    /// The fences of the rooms this node owns in a cluster (see `write_batch`).
    fences: Fences,
}

fn invalid(what: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(what.to_string())
}

impl PostgresStore {
    /// Connects to the database `url` names, migrates it and starts the writer. Any problem
    /// (unreachable, refused, a newer schema) is an error: the server must not run without the
    /// persistence it was configured with.
    pub fn open(url: &str) -> Result<PostgresStore, StoreError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| invalid(format!("not a PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(TIMEOUT);
        }
        config.application_name("caro-arena");
        let manager = Manager::from_config(
            config,
            NoTls,
            // Verified: a connection is checked with an empty query before it is handed out, so
            // after PostgreSQL dropped the pool's connections (a restart) the batches get new ones
            // rather than failing one per dead connection (Fast did: tested by
            // `after_its_connections_are_dropped_the_store_commits_again_on_new_ones`). One
            // round trip per batch.
            ManagerConfig {
                recycling_method: RecyclingMethod::Verified,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(TIMEOUT))
            .create_timeout(Some(TIMEOUT))
            .build()
            .map_err(invalid)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store-postgres")
            .enable_all()
            .build()
            .map_err(|e| invalid(format!("cannot start the store's runtime: {e}")))?;
        let handle = runtime.handle().clone();
        // The writer and its channels only once the database is usable: a store dropped on
        // an error before has no writer to wait for.
        let store = PostgresStore {
            tx: Writer::new(None),
            pool: pool.clone(),
            handle,
            runtime: Mutex::new(Some(runtime)),
            writer_done: Mutex::new(None),
            fences: Fences::default(),
        };
        store.block({
            let pool = pool.clone();
            async move {
                migrate(&pool).await?;
                // As SQLite at open: only sessions seated in unfinished games can be resumed
                // after a restart (`restore`); other rows go.
                let client = pool.get().await?;
                client.execute(PURGE_SESSIONS, &[&i64::MAX]).await?;
                Ok(())
            }
        })?;
        let (tx, rx) = tmpsc::unbounded_channel();
        let (done_tx, done_rx) = mpsc::channel();
        let fences = store.fences.clone();
        store.handle.spawn(async move {
            write_loop(pool, fences, rx).await;
            let _ = done_tx.send(());
        });
        store.tx.start(tx);
        *store.writer_done.lock() = Some(done_rx);
        Ok(store)
    }

    /// Runs `fut` on the store's runtime and waits for it, from any thread.
    fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().map_err(|_| StoreError::WriterGone)?
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer after it has written everything queued.
        self.tx.close();
        if let Some(done) = self.writer_done.lock().take() {
            let _ = done.recv();
        }
        if let Some(rt) = self.runtime.lock().take() {
            rt.shutdown_background();
        }
    }
}

async fn write_loop(pool: Pool, fences: Fences, mut rx: tmpsc::UnboundedReceiver<Msg>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        match write_batch(&pool, &fences, &batch).await {
            Ok(fenced) => answer_each(batch, |i| match fenced.contains(&i) {
                false => Ok(()),
                true => Err("another node owns this room now (fenced)".to_string()),
            }),
            Err(e) => {
                tracing::error!("store: writing {} events failed: {e}", batch.len());
                // The rooms released stop committing all the same. A row the failed batch did
                // not delete stays: a finished game's goes with the purge, an unstarted room's
                // with the sweep once this node is gone or restarted (docs/scaling.md).
                for m in &batch {
                    if let Msg::Release(room) = m {
                        fences.remove(room);
                    }
                }
                answer(batch, &Err(e.to_string()));
            }
        }
    }
}

/// The fence this node holds for each room it owns in a cluster (empty otherwise).
type Fences = Arc<DashMap<String, i64>>;

/// Writes a batch in one transaction. An event of a room whose fence this node holds is
/// written only if the database still has that fence (a room it lost to another node is not):
/// returns the indexes of the events refused so. A room released (closed here) lets its fence
/// go, and its `room_owners` row too if the room never stored a game (nothing will ever purge
/// it otherwise) and the fence is still this node's.
async fn write_batch(
    pool: &Pool,
    fences: &Fences,
    batch: &[Msg],
) -> Result<Vec<usize>, StoreError> {
    if !batch
        .iter()
        .any(|m| matches!(m, Msg::Event { .. } | Msg::Release(_)))
    {
        return Ok(Vec::new());
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // The rooms of the batch whose fence this node holds, checked in one statement (a batch of
    // a node running many rooms holds events of many), except those whose fence the batch
    // raises itself: they are this node's by then.
    let mut raising: HashSet<&str> = HashSet::new();
    let mut held: HashMap<&str, i64> = HashMap::new();
    for m in batch {
        let room = match m {
            Msg::Event {
                event: StoreEvent::Owner { room_id, .. },
                ..
            } => {
                raising.insert(room_id);
                continue;
            }
            Msg::Event { event, .. } => event.room(),
            Msg::Release(room) => Some(room.as_str()),
            Msg::Flush(_) => None,
        };
        if let Some(room) = room.filter(|r| !raising.contains(r)) {
            if let Some(f) = fences.get(room) {
                held.insert(room, *f);
            }
        }
    }
    let mut checked: HashMap<&str, bool> = write::hold_fences(&tx, &held).await?;
    // The fence each room ends the batch with (`None`: released), in the batch's order.
    let mut now_held: Vec<(&str, Option<i64>)> = Vec::new();
    let mut fenced = Vec::new();
    for (i, m) in batch.iter().enumerate() {
        let (event, at) = match m {
            Msg::Event { event, at, .. } => (event, at),
            Msg::Release(room) => {
                let fence = now_held
                    .iter()
                    .rev()
                    .find(|(r, _)| r == room)
                    .map_or_else(|| held.get(room.as_str()).copied(), |(_, f)| *f);
                if let (Some(fence), Some(true)) = (fence, checked.get(room.as_str())) {
                    write::drop_unstarted_fence(&tx, room, fence).await?;
                }
                now_held.push((room, None));
                continue;
            }
            Msg::Flush(_) => continue,
        };
        if let StoreEvent::Owner { room_id, node } = event {
            let fence = write::raise_fence(&tx, room_id, node, *at).await?;
            now_held.push((room_id, Some(fence)));
            checked.insert(room_id, true);
            continue;
        }
        if event.room().is_some_and(|r| checked.get(r) == Some(&false)) {
            fenced.push(i);
            continue;
        }
        write_event(&tx, event, *at).await?;
    }
    tx.commit().await?;
    for (room, fence) in now_held {
        if let Some(fence) = fence {
            fences.insert(room.to_string(), fence);
        } else {
            fences.remove(room);
        }
    }
    // A room lost keeps its stale fence, so its later events are refused too, until it closes
    // (`release_room`) or this node takes it again (a new fence).
    for (room, holds) in checked {
        if !holds {
            tracing::warn!(room, "a commit was fenced off: another node owns the room");
        }
    }
    Ok(fenced)
}

/// A game with both its seats in one row (`summary`).
const SUMMARY: &str = "SELECT g.id, g.game, g.width, g.height, g.rule, g.result, g.reason,
    g.created_at, g.finished_at,
    (SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id AND m.undone IS NULL),
    g.fault, g.detail, g.casual, g.time_control,
    sx.kind, sx.player_id, sx.name, sx.bot_level, so.kind, so.player_id, so.name, so.bot_level,
    g.rated
    FROM games g
    LEFT JOIN seats sx ON sx.game_id = g.id AND sx.seat = 'x'
    LEFT JOIN seats so ON so.game_id = g.id AND so.seat = 'o'";

/// The seat in columns `at..at + 4` of a [`SUMMARY`] row.
fn seat(r: &Row, at: usize) -> Option<SeatRecord> {
    let kind: Option<String> = r.get(at);
    Some(match kind?.as_str() {
        "bot" => SeatRecord::Bot {
            level: r.get::<_, Option<String>>(at + 3).unwrap_or_default(),
        },
        _ => SeatRecord::Human {
            player_id: r.get::<_, Option<String>>(at + 1).unwrap_or_default(),
            name: r.get::<_, Option<String>>(at + 2).unwrap_or_default(),
        },
    })
}

/// A [`SUMMARY`] row. A game without both seats is a damaged database, reported as such.
fn summary(r: &Row) -> Result<GameSummary, StoreError> {
    let id: String = r.get(0);
    let (Some(x), Some(o)) = (seat(r, 14), seat(r, 18)) else {
        return Err(invalid(format!(
            "game {id} lacks a row in seats for one of its players"
        )));
    };
    let small = |i: usize| r.get::<_, i32>(i).clamp(0, 255) as u8;
    Ok(GameSummary {
        game: r.get(1),
        width: small(2),
        height: small(3),
        rule: r.get(4),
        result: r.get(5),
        reason: r.get(6),
        created_at: r.get(7),
        finished_at: r.get(8),
        moves: r.get::<_, i64>(9) as u32,
        fault: r.get(10),
        detail: r.get(11),
        casual: r.get(12),
        rated: r.get(22),
        time_control: super::sqlite::time_control(r.get(13)),
        players: GamePlayers { x, o },
        id,
    })
}

async fn game_of(
    client: &deadpool_postgres::Client,
    id: &str,
) -> Result<Option<GameRecord>, StoreError> {
    let st = client
        .prepare_cached(&format!("{SUMMARY} WHERE g.id = $1"))
        .await?;
    let Some(row) = client.query_opt(&st, &[&id]).await? else {
        return Ok(None);
    };
    let summary = summary(&row)?;
    let st = client
        .prepare_cached(
            "SELECT x, y, seq, at_ms, clock_x_ms, clock_o_ms FROM moves
             WHERE game_id = $1 AND undone IS NULL ORDER BY seq",
        )
        .await?;
    let moves = client
        .query(&st, &[&id])
        .await?
        .iter()
        .map(|r| MoveRecord {
            x: r.get::<_, i32>(0) as u8,
            y: r.get::<_, i32>(1) as u8,
            seq: r.get::<_, i64>(2) as u64,
            at: r.get(3),
            clock: match (r.get::<_, Option<i64>>(4), r.get::<_, Option<i64>>(5)) {
                (Some(x), Some(o)) => Some([x.max(0) as u64, o.max(0) as u64]),
                _ => None,
            },
        })
        .collect();
    let st = client
        .prepare_cached("SELECT seat, name, text, at_ms FROM chat WHERE game_id = $1 ORDER BY id")
        .await?;
    let chat = client
        .query(&st, &[&id])
        .await?
        .iter()
        .map(|r| ChatLine {
            channel: ChatChannel::Players,
            from: r.get::<_, String>(1).into(),
            seat: Some(if r.get::<_, &str>(0) == "o" {
                Seat::O
            } else {
                Seat::X
            }),
            text: r.get::<_, String>(2).into(),
            at: r.get(3),
        })
        .collect();
    // The last event number of the move log, a takeback's included.
    let st = client
        .prepare_cached(
            "SELECT COALESCE(MAX(GREATEST(seq, COALESCE(undone, 0))), 0)::BIGINT FROM moves
             WHERE game_id = $1",
        )
        .await?;
    let seq: i64 = client.query_one(&st, &[&id]).await?.get(0);
    Ok(Some(GameRecord {
        summary,
        moves,
        chat,
        seq: seq as u64,
    }))
}

impl Store for PostgresStore {
    fn record(&self, event: StoreEvent) -> Commit {
        self.tx.record(event)
    }

    fn flush(&self) {
        self.tx.flush()
    }

    fn restore(&self) -> Result<Restored, StoreError> {
        let pool = self.pool.clone();
        self.block(async move {
            let client = pool.get().await?;
            let ids = client
                .query(
                    "SELECT id FROM games WHERE finished_at IS NULL ORDER BY created_at, id",
                    &[],
                )
                .await?;
            let mut games = Vec::new();
            for row in ids {
                if let Some(g) = game_of(&client, row.get(0)).await? {
                    games.push(g);
                }
            }
            let sessions = client
                .query(
                    "SELECT token_hash, player_id, name FROM sessions WHERE player_id IN (
                         SELECT s.player_id FROM seats s JOIN games g ON g.id = s.game_id
                         WHERE g.finished_at IS NULL AND s.player_id IS NOT NULL)
                     ORDER BY token_hash",
                    &[],
                )
                .await?
                .iter()
                .map(|r| RestoredSession {
                    token_hash: r.get(0),
                    player_id: r.get(1),
                    name: r.get(2),
                })
                .collect();
            Ok(Restored { games, sessions })
        })
    }

    fn accounts(&self) -> Result<StoreAccounts, StoreError> {
        let pool = self.pool.clone();
        self.block(async move {
            let client = pool.get().await?;
            let accounts = client
                .query(
                    "SELECT player_id, username, password_phc FROM accounts ORDER BY player_id",
                    &[],
                )
                .await?
                .iter()
                .map(|r| StoredAccount {
                    player_id: r.get(0),
                    username: r.get(1),
                    phc: r.get(2),
                })
                .collect();
            let tokens = client
                .query(
                    "SELECT token_hash, player_id FROM account_sessions ORDER BY token_hash",
                    &[],
                )
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            Ok(StoreAccounts { accounts, tokens })
        })
    }

    fn account_of_token(&self, token_hash: &str) -> Result<Option<StoredAccount>, StoreError> {
        let (pool, hash) = (self.pool.clone(), token_hash.to_string());
        self.block(async move {
            let client = pool.get().await?;
            let row = client
                .query_opt(
                    "SELECT a.player_id, a.username, a.password_phc FROM account_sessions t
                     JOIN accounts a ON a.player_id = t.player_id WHERE t.token_hash = $1",
                    &[&hash],
                )
                .await?;
            Ok(row.map(|r| StoredAccount {
                player_id: r.get(0),
                username: r.get(1),
                phc: r.get(2),
            }))
        })
    }

    fn account_by_username(&self, username_key: &str) -> Result<Option<StoredAccount>, StoreError> {
        let (pool, key) = (self.pool.clone(), username_key.to_string());
        self.block(async move {
            let client = pool.get().await?;
            let row = client
                .query_opt(
                    "SELECT player_id, username, password_phc FROM accounts
                     WHERE username_key = $1",
                    &[&key],
                )
                .await?;
            Ok(row.map(|r| StoredAccount {
                player_id: r.get(0),
                username: r.get(1),
                phc: r.get(2),
            }))
        })
    }

    fn claim_account(&self, account: &NewAccount) -> Result<AccountClaim, StoreError> {
        let (pool, account) = (self.pool.clone(), account.clone());
        self.block(async move {
            let client = pool.get().await?;
            write::claim_account(&client, &account, now_ms()).await
        })
    }

    fn session_of_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(RestoredSession, Vec<String>)>, StoreError> {
        let (pool, hash) = (self.pool.clone(), token_hash.to_string());
        self.block(async move {
            let client = pool.get().await?;
            let Some(row) = client
                .query_opt(
                    "SELECT token_hash, player_id, name FROM sessions WHERE token_hash = $1",
                    &[&hash],
                )
                .await?
            else {
                return Ok(None);
            };
            let session = RestoredSession {
                token_hash: row.get(0),
                player_id: row.get(1),
                name: row.get(2),
            };
            let rooms = client
                .query(
                    "SELECT g.id FROM games g JOIN seats s ON s.game_id = g.id
                     WHERE g.finished_at IS NULL AND s.player_id = $1 ORDER BY g.id",
                    &[&session.player_id],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            Ok(Some((session, rooms)))
        })
    }

    fn release_room(&self, room_id: &str) {
        // Through the writer, not at once: events of the room still queued are then written
        // (or refused) under its fence, never unchecked.
        self.tx.release(room_id);
    }

    fn fence_nodes(&self) -> Result<Vec<String>, StoreError> {
        let pool = self.pool.clone();
        self.block(async move {
            let client = pool.get().await?;
            let rows = client
                .query(
                    "SELECT DISTINCT o.node FROM room_owners o LEFT JOIN games g
                     ON g.id = o.room_id WHERE g.finished_at IS NULL ORDER BY o.node",
                    &[],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn fenced_rooms(&self, node: &str, raised_before: i64) -> Result<Vec<String>, StoreError> {
        let (pool, node) = (self.pool.clone(), node.to_string());
        self.block(async move {
            let client = pool.get().await?;
            let st = client
                .prepare_cached(
                    "SELECT o.room_id FROM room_owners o LEFT JOIN games g ON g.id = o.room_id
                     WHERE o.node = $1 AND o.at_ms < $2 AND g.finished_at IS NULL
                     ORDER BY o.room_id",
                )
                .await?;
            let rows = client.query(&st, &[&node, &raised_before]).await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn list_games(&self, q: &GameQuery) -> Result<Vec<GameSummary>, StoreError> {
        let pool = self.pool.clone();
        let (before, before_id) = match &q.before {
            Some(c) => (Some(c.finished_at), c.id.clone()),
            None => (None, None),
        };
        let (player, limit) = (q.player.clone(), i64::from(q.limit));
        self.block(async move {
            let client = pool.get().await?;
            let st = client
                .prepare_cached(&format!(
                    "{SUMMARY}
                     WHERE g.finished_at IS NOT NULL
                       AND ($1::BIGINT IS NULL OR g.finished_at < $1
                            OR (g.finished_at = $1 AND $4::TEXT IS NOT NULL AND g.id < $4))
                       AND ($2::TEXT IS NULL OR EXISTS (
                           SELECT 1 FROM seats s WHERE s.game_id = g.id AND s.player_id = $2))
                     ORDER BY g.finished_at DESC, g.id DESC
                     LIMIT $3"
                ))
                .await?;
            client
                .query(&st, &[&before, &player, &limit, &before_id])
                .await?
                .iter()
                .map(summary)
                .collect()
        })
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        let (pool, id) = (self.pool.clone(), id.to_string());
        self.block(async move { game_of(&pool.get().await?, &id).await })
    }

    fn ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        let pool = self.pool.clone();
        self.block(async move { ratings::all(&pool.get().await?).await })
    }

    fn rating_history(&self, player_id: &str) -> Result<Vec<RatingHistoryRow>, StoreError> {
        let (pool, id) = (self.pool.clone(), player_id.to_string());
        self.block(async move { ratings::history(&pool.get().await?, &id).await })
    }

    fn player_record(&self, player_id: &str) -> Result<PlayerRecord, StoreError> {
        let (pool, id) = (self.pool.clone(), player_id.to_string());
        self.block(async move { ratings::record(&pool.get().await?, &id).await })
    }

    fn analysis(&self, id: &str) -> Result<Option<String>, StoreError> {
        let (pool, id) = (self.pool.clone(), id.to_string());
        self.block(async move {
            let client = pool.get().await?;
            let row = client
                .query_opt("SELECT json FROM analyses WHERE game_id = $1", &[&id])
                .await?;
            Ok(row.map(|r| r.get(0)))
        })
    }
}
