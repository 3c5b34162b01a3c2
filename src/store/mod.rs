//! Where games are recorded: every room hands its game record (created, each move, the result) to
//! a [`Store`], in order, from its own task; connections hand it session identities (hashed
//! tokens). The store answers the replay API and, at start, gives back the unfinished games and
//! the sessions seated in them so the server can restore its rooms.
//!
//! The durability contract: [`Store::record`] returns a [`Commit`] that resolves once the event is
//! durable. A room awaits the commit of a move before it sends the move to anyone, so an
//! acknowledged move is never lost. Recording never blocks the caller: the SQLite store
//! ([`sqlite::SqliteStore`]) queues events to its own writer thread, which commits whatever is
//! queued in one transaction (group commit).
//!
//! This module never talks to clients and never decides anything about a game. The trait is small
//! on purpose, so a server database (`postgres/`) can replace SQLite.
//!
//! The files: this one holds the contract (the [`Store`] trait, [`Commit`], the events and the
//! seat and forfeit records they carry, the helpers every store shares); `records.rs` what a
//! store gives back (game summaries and records, the [`Cursor`] of the list, what is restored);
//! `memory.rs` the stores that keep nothing on disk; `sqlite.rs` the default one; `postgres/`
//! the one several nodes share (same contract, a server database); `psq.rs` the Gomocup `.psq`
//! export.

mod memory;
pub mod postgres;
pub mod psq;
mod ratings;
mod records;
pub mod sqlite;
mod writer;

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::protocol::{Cell, Outcome, Reason, Seat, TimeControl};

pub use memory::{MemoryStore, NullStore};
pub use ratings::{PlayerRecord, RatingHistoryRow, RatingRow, RowChange};
pub use records::{
    Cursor, GamePlayers, GameQuery, GameRecord, GameSummary, MoveRecord, Restored, RestoredSession,
};

/// What went wrong in a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused something.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database file or its directory.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The database is not one we can use.
    #[error("{0}")]
    Invalid(String),
    /// PostgreSQL refused something, or could not be reached.
    #[error("{0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had from the pool (the pool's message, which already
    /// includes the driver's cause: kept as text so the cause is not printed twice).
    #[error("{0}")]
    Pool(String),
    /// The writer thread has stopped (after an earlier error, or at shutdown).
    #[error("the store's writer has stopped")]
    WriterGone,
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(e: deadpool_postgres::PoolError) -> StoreError {
        StoreError::Pool(e.to_string())
    }
}

/// Who sat in a seat when the game started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SeatRecord {
    /// A person.
    Human {
        /// Public player id.
        player_id: String,
        /// Display name at the start of the game.
        name: String,
    },
    /// A bot.
    Bot {
        /// Bot level name.
        level: String,
    },
}

impl SeatRecord {
    /// The short description used by earlier tools: a player id or `bot:<level>`.
    pub fn describe(&self) -> String {
        match self {
            SeatRecord::Human { player_id, .. } => player_id.clone(),
            SeatRecord::Bot { level } => format!("bot:{level}"),
        }
    }
}

/// A game was created (both seats taken): the parameters needed to replay or restore it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameCreated {
    /// The room (and game) id.
    pub room_id: String,
    /// `"caro"` / `"tictactoe"`.
    pub game: &'static str,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule.
    pub rule: Option<&'static str>,
    /// X then O.
    pub seats: [SeatRecord; 2],
    /// The clock it is played with.
    pub time_control: TimeControl,
    /// A casual game (a bot grants takebacks).
    pub casual: bool,
    /// A rated game (`crate::ratings`; decided when it starts).
    pub rated: bool,
}

/// One event of a game record, or a session identity.
#[derive(Clone, Debug, PartialEq)]
pub enum StoreEvent {
    /// A new game.
    Created(GameCreated),
    /// A move with its room sequence number.
    Move {
        /// Room.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Mover.
        seat: Seat,
        /// Cell.
        cell: Cell,
        /// X's and O's time left after the move (the mover's increment credited), ms; `None`
        /// without a clock.
        clock: Option<[u64; 2]>,
    },
    /// The result.
    Result {
        /// Room.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Winner or draw.
        result: Outcome,
        /// Why.
        reason: Reason,
        /// For a forfeit: which rule the outside engine broke, and how (`game_over`'s `fault`
        /// and `detail`).
        forfeit: Option<ForfeitRecord>,
        /// A rated game's new ratings (one row per account seat; empty when unrated or
        /// aborted), written in the result's transaction, and only if the result is (so a
        /// result recorded twice never applies them twice).
        ratings: Vec<RatingRow>,
    },
    /// A session identity (when it takes a seat, or a seated one is renamed). Only the token's
    /// hash is ever stored.
    Session {
        /// SHA-256 of the token, hex.
        token_hash: String,
        /// Public player id.
        player_id: String,
        /// Current name.
        name: String,
    },
    /// Moves taken back (an accepted takeback): the last `plies` moves are marked undone by
    /// event `seq`.
    Takeback {
        /// Room.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Moves undone.
        plies: u32,
    },
    /// A line of the players' chat, kept with their game (the spectators' channel is not kept).
    Chat {
        /// Room.
        room_id: String,
        /// The speaker's seat.
        seat: Seat,
        /// The speaker's name as the room showed it.
        name: String,
        /// What was said.
        text: String,
        /// Unix milliseconds, as the line was sent.
        at: i64,
    },
    /// Delete the session rows last written before `updated_before` (Unix ms) that no
    /// unfinished game seats: rows no restart could resume, purged while running (the lobby's
    /// janitor) as opening the file purges them at start.
    SessionsExpired {
        /// Unix time in milliseconds.
        updated_before: i64,
    },
    /// An account change ([`crate::accounts`]).
    Account(AccountEvent),
    /// This node now owns room `room_id` (a cluster, docs/scaling.md): the PostgreSQL store
    /// raises the room's fence in `room_owners` and from then on commits the room's events only
    /// while the fence is still the one it raised, so a node that lost the room can never
    /// commit over its new owner. Stores one node owns ignore it.
    Owner {
        /// Room.
        room_id: String,
        /// The node taking it.
        node: String,
    },
    /// A finished post-game analysis of a stored game (`crate::analysis`), replacing any
    /// earlier one of the game.
    Analysis {
        /// The game.
        game_id: String,
        /// The node budget it was searched with.
        nodes_per_position: u64,
        /// The [`crate::analysis::Analysis`] as JSON.
        json: String,
    },
}

impl StoreEvent {
    /// The room whose game record this event belongs to (`None` for sessions, accounts,
    /// analyses of finished games, ownership).
    pub fn room(&self) -> Option<&str> {
        match self {
            StoreEvent::Created(c) => Some(&c.room_id),
            StoreEvent::Move { room_id, .. }
            | StoreEvent::Result { room_id, .. }
            | StoreEvent::Takeback { room_id, .. }
            | StoreEvent::Chat { room_id, .. } => Some(room_id),
            StoreEvent::Session { .. }
            | StoreEvent::SessionsExpired { .. }
            | StoreEvent::Account(_)
            | StoreEvent::Owner { .. }
            | StoreEvent::Analysis { .. } => None,
        }
    }
}

/// What changes in accounts. No password ever appears here, only its argon2id PHC string, and
/// no token, only its SHA-256.
#[derive(Clone, Debug, PartialEq)]
pub enum AccountEvent {
    /// A new account for a player id.
    Created {
        /// The player id it owns.
        player_id: String,
        /// As registered.
        username: String,
        /// Lowercased: unique.
        username_key: String,
        /// argon2id PHC string.
        phc: String,
    },
    /// A new password hash.
    Password {
        /// The account.
        player_id: String,
        /// argon2id PHC string.
        phc: String,
    },
    /// A session token is bound to the account.
    SessionBound {
        /// SHA-256 of the token, hex.
        token_hash: String,
        /// The account.
        player_id: String,
    },
    /// Every token of the account is unbound.
    LoggedOutEverywhere {
        /// The account.
        player_id: String,
    },
}

/// A new account, as [`Store::claim_account`] writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAccount {
    /// The player id it owns.
    pub player_id: String,
    /// As registered.
    pub username: String,
    /// Lowercased: unique.
    pub username_key: String,
    /// argon2id PHC string.
    pub phc: String,
}

impl From<NewAccount> for AccountEvent {
    fn from(a: NewAccount) -> AccountEvent {
        AccountEvent::Created {
            player_id: a.player_id,
            username: a.username,
            username_key: a.username_key,
            phc: a.phc,
        }
    }
}

/// What [`Store::claim_account`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountClaim {
    /// The account's row is written (or was already, for this player and name).
    Written,
    /// Another player's account has the username.
    Taken,
    /// The player already has an account under another username.
    AlreadyAccount,
    /// Nothing written: the store leaves uniqueness to memory (one node owns it), and the
    /// account goes through [`Store::record`].
    Local,
}

/// An account as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredAccount {
    /// The player id it owns.
    pub player_id: String,
    /// As registered.
    pub username: String,
    /// argon2id PHC string.
    pub phc: String,
}

/// Every account and every token hash bound to one (token hash, player id), read at start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreAccounts {
    /// The accounts.
    pub accounts: Vec<StoredAccount>,
    /// (token hash, player id).
    pub tokens: Vec<(String, String)>,
}

/// Resolves once an event is durable. Stores without durability resolve at once.
#[must_use = "a move must not be acknowledged before its commit resolves"]
pub struct Commit(Option<oneshot::Receiver<Result<(), String>>>);

impl Commit {
    /// Already durable (or nothing to wait for).
    pub fn done() -> Commit {
        Commit(None)
    }
    /// Resolves when `rx` answers.
    pub fn pending(rx: oneshot::Receiver<Result<(), String>>) -> Commit {
        Commit(Some(rx))
    }
    /// Whether there is anything to wait for.
    pub fn is_pending(&self) -> bool {
        self.0.is_some()
    }
    /// Waits for the commit; an error means the event is not durable.
    pub async fn wait(self) -> Result<(), StoreError> {
        match self.0 {
            None => Ok(()),
            Some(rx) => match rx.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(StoreError::Invalid(e)),
                Err(_) => Err(StoreError::WriterGone),
            },
        }
    }
}

/// Why an outside engine forfeited, as `game_over` told the players.
#[derive(Clone, Debug, PartialEq)]
pub struct ForfeitRecord {
    /// The fault's code (`timeout`, `illegal_move`, ...).
    pub fault: String,
    /// What the engine did, in words.
    pub detail: String,
}

/// A sink for game records and the source of the replay API.
///
/// `record` is called from room and connection tasks and must never block. The read methods may
/// block (they do I/O): the server calls them in `spawn_blocking` or before it starts serving.
pub trait Store: Send + Sync + 'static {
    /// Records one event; the returned [`Commit`] resolves once it is durable.
    fn record(&self, event: StoreEvent) -> Commit;
    /// Called once at shutdown after every room has finished: waits until everything queued is
    /// written. Blocks.
    fn flush(&self) {}
    /// Unfinished games and their sessions, read once at start. Blocks.
    fn restore(&self) -> Result<Restored, StoreError> {
        Ok(Restored::default())
    }
    /// Every account and the token hashes bound to them, read once at start. Blocks.
    fn accounts(&self) -> Result<StoreAccounts, StoreError> {
        Ok(StoreAccounts::default())
    }
    /// The account a token (by its hash) is bound to, looked up when a `hello` brings a token
    /// this node does not hold: with a database several nodes share (PostgreSQL), another node
    /// may have issued it since this one started. Stores that one node owns have every token in
    /// memory from [`Store::accounts`] and answer `None`. Blocks.
    fn account_of_token(&self, _token_hash: &str) -> Result<Option<StoredAccount>, StoreError> {
        Ok(None)
    }
    /// The account whose lowercased username is `username_key`, looked up at every `login` and
    /// `register` when the database is shared (PostgreSQL): another node may have made the
    /// account, or changed its password, since this one started. Stores one node owns answer
    /// `None` (memory has every account). Blocks.
    fn account_by_username(
        &self,
        _username_key: &str,
    ) -> Result<Option<StoredAccount>, StoreError> {
        Ok(None)
    }
    /// Writes a new account's row at once, outside the write batches, when the database is
    /// shared (PostgreSQL): the insert is the cluster-wide uniqueness check of the username, so
    /// two nodes registering one name at the same moment cannot both succeed. Stores one node
    /// owns answer [`AccountClaim::Local`]: the accounts map in memory decides, and the account
    /// is written through [`Store::record`]. Blocks.
    fn claim_account(&self, _account: &NewAccount) -> Result<AccountClaim, StoreError> {
        Ok(AccountClaim::Local)
    }
    /// The session of a token (by its hash) and the unfinished games it holds a seat in, looked
    /// up when a `hello` brings a token this node does not hold: in a cluster another node may
    /// have issued it. Stores one node owns answer `None` (every resumable session is in memory
    /// from [`Store::restore`]). Blocks.
    fn session_of_token(
        &self,
        _token_hash: &str,
    ) -> Result<Option<(RestoredSession, Vec<String>)>, StoreError> {
        Ok(None)
    }
    /// The room `room_id` closed or moved: this node no longer commits for it under a fence.
    /// Queued after the room's events (they are still written, or refused, under the fence);
    /// a room that never stored a game also loses its fence row, if the fence is still this
    /// node's.
    fn release_room(&self, _room_id: &str) {}
    /// The nodes that raised the fence of a room whose game is unfinished or never started (in
    /// a cluster: the nodes that may own rooms). Stores one node owns answer none. Blocks.
    fn fence_nodes(&self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
    /// The rooms whose fence `node` raised last, before `raised_before` (Unix ms), and whose
    /// game is unfinished or never started. Blocks.
    fn fenced_rooms(&self, _node: &str, _raised_before: i64) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
    /// Finished games, newest first. Blocks.
    fn list_games(&self, _query: &GameQuery) -> Result<Vec<GameSummary>, StoreError> {
        Ok(Vec::new())
    }
    /// One game (finished or not) with its moves. Blocks.
    fn game(&self, _id: &str) -> Result<Option<GameRecord>, StoreError> {
        Ok(None)
    }
    /// A game's stored analysis, as the JSON `StoreEvent::Analysis` carried. Blocks.
    fn analysis(&self, _id: &str) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
    /// Every account's current rating in every family, read once at start. Blocks.
    fn ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        Ok(Vec::new())
    }
    /// An account's rated games, oldest first. Blocks.
    fn rating_history(&self, _player_id: &str) -> Result<Vec<RatingHistoryRow>, StoreError> {
        Ok(Vec::new())
    }
    /// A player's W/D/L over every finished game and when its account was made. Blocks.
    fn player_record(&self, _player_id: &str) -> Result<PlayerRecord, StoreError> {
        Ok(PlayerRecord::default())
    }
}

/// SHA-256 of a session token, lowercase hex: what stores and the session map keep, so a
/// leaked database or memory dump does not hand out identities.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `x` / `o`.
pub fn seat_str(s: Seat) -> &'static str {
    match s {
        Seat::X => "x",
        Seat::O => "o",
    }
}

/// `x` / `o` / `draw`.
pub fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::X => "x",
        Outcome::O => "o",
        Outcome::Draw => "draw",
    }
}

/// The wire name of a reason.
pub fn reason_str(r: Reason) -> &'static str {
    match r {
        Reason::Line => "line",
        Reason::BoardFull => "board_full",
        Reason::Resign => "resign",
        Reason::Abandoned => "abandoned",
        Reason::Forfeit => "forfeit",
        Reason::Aborted => "aborted",
        Reason::Time => "time",
        Reason::Agreement => "agreement",
    }
}

/// Which store a server runs with, from `[store]`: PostgreSQL when `url` is set, else the
/// SQLite file `path` (or memory for `:memory:`).
pub fn open(config: &crate::config::StoreConfig) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    if let Some(url) = &config.url {
        return Ok(std::sync::Arc::new(postgres::PostgresStore::open(url)?));
    }
    let path = config.path.as_str();
    if path == MEMORY {
        return Ok(std::sync::Arc::new(MemoryStore::default()));
    }
    Ok(std::sync::Arc::new(sqlite::SqliteStore::open(
        std::path::Path::new(path),
    )?))
}

/// The `[store] path` that means "no persistence": an in-memory store, for tests.
pub const MEMORY: &str = ":memory:";

#[cfg(test)]
mod tests {
    use super::*;

    fn game(store: &dyn Store, id: &str, player: &str, finish: bool) {
        let _ = store.record(StoreEvent::Created(GameCreated {
            room_id: id.into(),
            game: "tictactoe",
            width: 3,
            height: 3,
            rule: None,
            time_control: TimeControl::None,
            seats: [
                SeatRecord::Human {
                    player_id: player.into(),
                    name: "n".into(),
                },
                SeatRecord::Bot { level: "b".into() },
            ],
            casual: false,
            rated: false,
        }));
        let _ = store.record(StoreEvent::Move {
            room_id: id.into(),
            seq: 1,
            seat: Seat::X,
            cell: [1, 1],
            clock: None,
        });
        if finish {
            let _ = store.record(StoreEvent::Result {
                room_id: id.into(),
                seq: 2,
                result: Outcome::O,
                reason: Reason::Resign,
                forfeit: None,
                ratings: Vec::new(),
            });
        }
    }

    fn ids(v: Vec<GameSummary>) -> Vec<String> {
        v.into_iter().map(|g| g.id).collect()
    }

    fn query(player: Option<&str>, limit: u32, before: Option<Cursor>) -> GameQuery {
        GameQuery {
            player: player.map(str::to_string),
            limit,
            before,
        }
    }

    /// The listing contract every store keeps: finished games only, newest first, by player, and
    /// pages that follow `Cursor::after` cover every game exactly once, even when several finish
    /// in the same millisecond (which the fast writes here make likely).
    fn lists_finished_games_newest_first(store: &dyn Store) {
        game(store, "a", "p1", true);
        game(store, "b", "p2", true);
        game(store, "c", "p1", false);
        for id in ["d", "e", "f", "g"] {
            game(store, id, "p3", true);
        }
        store.flush();
        let all = ids(store.list_games(&query(None, 100, None)).unwrap());
        assert_eq!(all.len(), 6, "{all:?}");
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, ["a", "b", "d", "e", "f", "g"]);
        let times: Vec<i64> = store
            .list_games(&query(None, 100, None))
            .unwrap()
            .iter()
            .map(|g| g.finished_at.unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
        assert_eq!(
            ids(store.list_games(&query(Some("p1"), 10, None)).unwrap()),
            ["a"]
        );

        let mut paged = Vec::new();
        let mut before = None;
        loop {
            let page = store.list_games(&query(None, 4, before.clone())).unwrap();
            before = page.last().and_then(Cursor::after);
            let n = page.len();
            paged.extend(ids(page));
            if n < 4 {
                break;
            }
        }
        assert_eq!(paged, all);

        let b = store.game("b").unwrap().unwrap();
        assert_eq!(b.moves.len(), 1);
        assert_eq!(b.summary.reason.as_deref(), Some("resign"));
        // A bare time excludes every game of that millisecond.
        let t = b.summary.finished_at.unwrap();
        let older = ids(store
            .list_games(&query(
                None,
                100,
                Some(Cursor {
                    finished_at: t,
                    id: None,
                }),
            ))
            .unwrap());
        let expected: Vec<String> = store
            .list_games(&query(None, 100, None))
            .unwrap()
            .into_iter()
            .filter(|g| g.finished_at.unwrap() < t)
            .map(|g| g.id)
            .collect();
        assert_eq!(older, expected);
        assert!(store.game("c").unwrap().unwrap().summary.result.is_none());
    }

    #[test]
    fn the_memory_store_lists_finished_games_newest_first() {
        lists_finished_games_newest_first(&MemoryStore::default());
    }

    #[test]
    fn the_sqlite_store_lists_finished_games_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite::SqliteStore::open(&dir.path().join("games.db")).unwrap();
        lists_finished_games_newest_first(&store);
    }

    #[test]
    fn the_postgres_store_lists_finished_games_newest_first() {
        let Some(url) = postgres::testing::fresh_database("the_postgres_store_lists") else {
            return;
        };
        lists_finished_games_newest_first(&postgres::PostgresStore::open(&url).unwrap());
    }

    /// Sessions that no unfinished game seats cannot be resumed after a restart: reopening the
    /// file forgets them, so the table does not grow with every visitor ever seen.
    #[test]
    fn reopening_keeps_only_the_sessions_that_can_be_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        let (kept, rows) =
            sessions_kept_by_reopening(|| Box::new(sqlite::SqliteStore::open(&path).unwrap()));
        assert_eq!(kept, ["h1"]);
        let conn = rusqlite::Connection::open(&path).unwrap();
        let count: i64 = conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, rows);
    }

    #[test]
    fn reopening_a_postgres_database_keeps_only_the_sessions_that_can_be_resumed() {
        let Some(url) = postgres::testing::fresh_database("reopening_a_postgres_database") else {
            return;
        };
        let (kept, _) =
            sessions_kept_by_reopening(|| Box::new(postgres::PostgresStore::open(&url).unwrap()));
        assert_eq!(kept, ["h1"]);
    }

    /// Three sessions, one seated in an unfinished game: the hashes `restore` gives back after
    /// the store is reopened, and 1 (the rows the table should keep).
    fn sessions_kept_by_reopening(open: impl Fn() -> Box<dyn Store>) -> (Vec<String>, i64) {
        let store = open();
        for (hash, player) in [("h1", "p1"), ("h2", "p2"), ("h3", "p3")] {
            let _ = store.record(StoreEvent::Session {
                token_hash: hash.into(),
                player_id: player.into(),
                name: "n".into(),
            });
        }
        game(&*store, "open", "p1", false);
        game(&*store, "done", "p2", true);
        store.flush();
        drop(store);
        let store = open();
        let restored = store.restore().unwrap();
        let kept = restored
            .sessions
            .into_iter()
            .map(|s| s.token_hash)
            .collect();
        (kept, 1)
    }

    #[test]
    fn cursors_read_back_what_they_write() {
        for text in ["1700000000000", "1700000000000:abc"] {
            assert_eq!(text.parse::<Cursor>().unwrap().to_string(), text);
        }
        for bad in ["", "x", "17:", "x:abc"] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_are_stored_as_sha256_hex() {
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
