//! The embedded default store: one SQLite file in WAL mode.
//!
//! Writing: one std thread owns the write connection and is fed by a channel. It takes the first
//! queued event, then drains whatever else is queued (up to [`MAX_BATCH`]), writes them all in
//! one transaction, commits (an fsync of the WAL with `synchronous = FULL`), and only then
//! answers every waiter. That is group commit: under load, many rooms' moves share one fsync, and
//! no move is answered before the transaction holding it is on disk. Nothing here ever runs on
//! the async runtime's threads.
//!
//! Reading (replay API, restore): a second connection behind a mutex, used from `spawn_blocking`
//! or before the server starts. WAL lets it read while the writer writes.
//!
//! Schema changes are versioned migrations ([`MIGRATIONS`]) applied in order at open, tracked by
//! SQLite's `user_version`. Never edit a shipped migration: add the next one.

mod ratings;

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

use parking_lot::Mutex;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};

use crate::protocol::{ChatChannel, ChatLine, Seat, TimeControl};

use super::writer::{answer, Msg, Writer};
use super::{
    outcome_str, reason_str, seat_str, AccountEvent, Commit, GamePlayers, GameQuery, GameRecord,
    GameSummary, MoveRecord, Restored, RestoredSession, SeatRecord, Store, StoreAccounts,
    StoreError, StoreEvent, StoredAccount,
};

/// The most events written in one transaction.
pub const MAX_BATCH: usize = 4096;

/// Schema migrations, in order: `MIGRATIONS[i]` takes `user_version` from `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // v1: games, their seats and their append-only move logs.
    "CREATE TABLE games (
        id          TEXT PRIMARY KEY,
        game        TEXT NOT NULL,
        width       INTEGER NOT NULL,
        height      INTEGER NOT NULL,
        rule        TEXT,
        created_at  INTEGER NOT NULL,
        finished_at INTEGER,
        result      TEXT,
        reason      TEXT
    );
    CREATE TABLE seats (
        game_id   TEXT NOT NULL REFERENCES games(id),
        seat      TEXT NOT NULL,
        kind      TEXT NOT NULL,
        player_id TEXT,
        name      TEXT,
        bot_level TEXT,
        PRIMARY KEY (game_id, seat)
    ) WITHOUT ROWID;
    CREATE TABLE moves (
        game_id TEXT NOT NULL REFERENCES games(id),
        seq     INTEGER NOT NULL,
        seat    TEXT NOT NULL,
        x       INTEGER NOT NULL,
        y       INTEGER NOT NULL,
        at_ms   INTEGER NOT NULL,
        PRIMARY KEY (game_id, seq)
    ) WITHOUT ROWID;",
    // v2: hashed session tokens (restart resumes identities), and the indexes the replay API and
    // restore need.
    "CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        player_id  TEXT NOT NULL,
        name       TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX sessions_player ON sessions(player_id);
    CREATE INDEX games_finished ON games(finished_at);
    CREATE INDEX seats_player ON seats(player_id);",
    // v3: why an outside engine forfeited (`game_over`'s `fault` and `detail`).
    "ALTER TABLE games ADD COLUMN fault TEXT;
    ALTER TABLE games ADD COLUMN detail TEXT;",
    // v4: the players' chat, kept with the game.
    "CREATE TABLE chat (
        id      INTEGER PRIMARY KEY,
        game_id TEXT NOT NULL REFERENCES games(id),
        seat    TEXT NOT NULL,
        name    TEXT NOT NULL,
        text    TEXT NOT NULL,
        at_ms   INTEGER NOT NULL
    );
    CREATE INDEX chat_game ON chat(game_id, id);",
    // v5: casual games, and moves taken back (marked with the takeback's event number, kept
    // out of the game but not deleted).
    "ALTER TABLE games ADD COLUMN casual INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE moves ADD COLUMN undone INTEGER;",
    // v6: time controls: the game's (its JSON as the protocol writes it, NULL for none) and
    // both clocks after each move (NULL without a clock), so a restart restores them.
    "ALTER TABLE games ADD COLUMN time_control TEXT;
    ALTER TABLE moves ADD COLUMN clock_x_ms INTEGER;
    ALTER TABLE moves ADD COLUMN clock_o_ms INTEGER;",
    // v7: accounts (issue 18): a username and an argon2id PHC string per player id, and the
    // hashed session tokens bound to an account (kept until `logout_everywhere`, unlike the
    // guest `sessions` rows, which go when no unfinished game seats them).
    "CREATE TABLE accounts (
        player_id    TEXT PRIMARY KEY,
        username     TEXT NOT NULL,
        username_key TEXT NOT NULL UNIQUE,
        password_phc TEXT NOT NULL,
        created_at   INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE account_sessions (
        token_hash TEXT PRIMARY KEY,
        player_id  TEXT NOT NULL REFERENCES accounts(player_id),
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX account_sessions_player ON account_sessions(player_id);",
    // v8: post-game analyses (issue 18), one per game: the latest replaces the earlier one.
    "CREATE TABLE analyses (
        game_id            TEXT PRIMARY KEY REFERENCES games(id),
        nodes_per_position INTEGER NOT NULL,
        json               TEXT NOT NULL,
        at_ms              INTEGER NOT NULL
    );",
    // v9: ratings (issue 18, docs/ratings.md): whether a game is rated, each account's current
    // Glicko-2 rating per family, and one history row per rated game, all written with the
    // game's result.
    "ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE ratings (
        player_id  TEXT NOT NULL REFERENCES accounts(player_id),
        family     TEXT NOT NULL,
        rating     REAL NOT NULL,
        deviation  REAL NOT NULL,
        volatility REAL NOT NULL,
        games      INTEGER NOT NULL,
        wins       INTEGER NOT NULL,
        draws      INTEGER NOT NULL,
        losses     INTEGER NOT NULL,
        last_ms    INTEGER NOT NULL,
        PRIMARY KEY (player_id, family)
    ) WITHOUT ROWID;
    CREATE TABLE rating_history (
        player_id  TEXT NOT NULL REFERENCES accounts(player_id),
        family     TEXT NOT NULL,
        game_id    TEXT NOT NULL REFERENCES games(id),
        at_ms      INTEGER NOT NULL,
        rating     REAL NOT NULL,
        deviation  REAL NOT NULL,
        volatility REAL NOT NULL,
        PRIMARY KEY (player_id, family, game_id)
    ) WITHOUT ROWID;
    CREATE INDEX rating_history_player ON rating_history(player_id, at_ms);",
];

/// The schema version this server writes.
pub fn schema_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// A SQLite file in WAL mode with a writer thread. See the module docs.
pub struct SqliteStore {
    tx: Writer<mpsc::Sender<Msg>>,
    reader: Mutex<Connection>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

fn io_err(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Opens (creating the file and its directory if needed) a connection with our pragmas.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Invalid(format!(
            "cannot switch to WAL mode (journal_mode is {mode})"
        )));
    }
    // FULL: every commit fsyncs the WAL, so an acknowledged move survives power loss too, not
    // only a killed process (NORMAL would already survive kill -9; see docs/persistence.md).
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// Brings the schema to the current version; refuses a newer one. The last step is a write,
/// so a read-only file fails here, at start, rather than at the first move.
pub fn migrate(conn: &mut Connection) -> Result<u32, StoreError> {
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let current = schema_version();
    if version > current {
        return Err(StoreError::Invalid(format!(
            "the database has schema version {version}, newer than this server's {current}"
        )));
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)?;
        tracing::info!(version = i + 1, "database migrated");
    }
    tx.pragma_update(None, "user_version", current)?;
    tx.commit()?;
    Ok(version)
}

impl SqliteStore {
    /// Opens or creates the database at `path`, migrates it and starts the writer thread. Any
    /// problem (unwritable directory, a file that is not a database, a newer schema) is an error:
    /// the server must not run without the persistence it was configured with.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        let mut conn = connect(path)?;
        migrate(&mut conn)?;
        // Catches a damaged file at start instead of mid-game.
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if check != "ok" {
            return Err(StoreError::Invalid(format!(
                "integrity check failed: {check}"
            )));
        }
        // Only sessions seated in unfinished games are loaded at start (`restore`): every other
        // token is unknown to this process and can never be resumed, so its row goes.
        conn.execute(PURGE_SESSIONS, [i64::MAX])?;
        let reader = connect(path)?;
        reader.pragma_update(None, "query_only", true)?;
        let (tx, rx) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || write_loop(conn, rx))
            .map_err(|e| io_err(path, e))?;
        Ok(SqliteStore {
            tx: Writer::new(Some(tx)),
            reader: Mutex::new(reader),
            writer: Mutex::new(Some(writer)),
        })
    }

    fn reader(&self) -> parking_lot::MutexGuard<'_, Connection> {
        self.reader.lock()
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer after it has written everything queued.
        self.tx.close();
        if let Some(w) = self.writer.lock().take() {
            let _ = w.join();
        }
    }
}

fn write_loop(mut conn: Connection, rx: mpsc::Receiver<Msg>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let result = write_batch(&mut conn, &batch).map_err(|e| {
            tracing::error!("store: writing {} events failed: {e}", batch.len());
            e.to_string()
        });
        answer(batch, &result);
    }
}

fn write_batch(conn: &mut Connection, batch: &[Msg]) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    for m in batch {
        if let Msg::Event { event, at, .. } = m {
            write_event(&tx, event, *at)?;
        }
    }
    tx.commit()
}

/// Statements are tolerant (OR IGNORE, upserts) so that one odd event cannot fail the whole
/// group-commit batch that carries other rooms' moves.
fn write_event(tx: &Transaction<'_>, event: &StoreEvent, at: i64) -> Result<(), rusqlite::Error> {
    match event {
        StoreEvent::Created(c) => {
            let tc = c
                .time_control
                .is_clocked()
                .then(|| serde_json::to_string(&c.time_control).unwrap_or_default());
            tx.prepare_cached(
                "INSERT OR IGNORE INTO games (id, game, width, height, rule, created_at, casual,
                     time_control, rated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                c.room_id, c.game, c.width, c.height, c.rule, at, c.casual, tc, c.rated
            ])?;
            for (seat, rec) in ["x", "o"].into_iter().zip(&c.seats) {
                let (kind, player_id, name, level) = match rec {
                    SeatRecord::Human { player_id, name } => {
                        ("human", Some(player_id), Some(name), None)
                    }
                    SeatRecord::Bot { level } => ("bot", None, None, Some(level)),
                };
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO seats (game_id, seat, kind, player_id, name, bot_level)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![c.room_id, seat, kind, player_id, name, level])?;
            }
        }
        StoreEvent::Move {
            room_id,
            seq,
            seat,
            cell,
            clock,
        } => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO moves (game_id, seq, seat, x, y, at_ms, clock_x_ms,
                     clock_o_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                room_id,
                *seq as i64,
                seat_str(*seat),
                cell[0],
                cell[1],
                at,
                clock.map(|c| c[0] as i64),
                clock.map(|c| c[1] as i64),
            ])?;
        }
        StoreEvent::Result {
            room_id,
            result,
            reason,
            forfeit,
            ratings: rows,
            ..
        } => {
            let finished = tx
                .prepare_cached(
                    "UPDATE games SET result = ?2, reason = ?3, finished_at = ?4, fault = ?5,
                     detail = ?6
                 WHERE id = ?1 AND finished_at IS NULL",
                )?
                .execute(params![
                    room_id,
                    outcome_str(*result),
                    reason_str(*reason),
                    at,
                    forfeit.as_ref().map(|f| f.fault.as_str()),
                    forfeit.as_ref().map(|f| f.detail.as_str()),
                ])?;
            // Only with the result they belong to: never twice.
            if finished > 0 {
                ratings::write(tx, room_id, rows, at)?;
            }
        }
        StoreEvent::Session {
            token_hash,
            player_id,
            name,
        } => {
            tx.prepare_cached(
                "INSERT INTO sessions (token_hash, player_id, name, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (token_hash) DO UPDATE SET name = excluded.name,
                     updated_at = excluded.updated_at",
            )?
            .execute(params![token_hash, player_id, name, at])?;
        }
        StoreEvent::Takeback {
            room_id,
            seq,
            plies,
        } => {
            tx.prepare_cached(
                "UPDATE moves SET undone = ?2 WHERE game_id = ?1 AND seq IN (
                     SELECT seq FROM moves WHERE game_id = ?1 AND undone IS NULL
                     ORDER BY seq DESC LIMIT ?3)",
            )?
            .execute(params![room_id, *seq as i64, plies])?;
        }
        StoreEvent::Chat {
            room_id,
            seat,
            name,
            text,
            at,
        } => {
            tx.prepare_cached(
                "INSERT INTO chat (game_id, seat, name, text, at_ms)
                 SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM games WHERE id = ?1)",
            )?
            .execute(params![room_id, seat_str(*seat), name, text, at])?;
        }
        StoreEvent::Account(a) => write_account(tx, a, at)?,
        // One node owns an SQLite file: nothing to fence.
        StoreEvent::Owner { .. } => {}
        StoreEvent::Analysis {
            game_id,
            nodes_per_position,
            json,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO analyses (game_id, nodes_per_position, json, at_ms)
                 SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM games WHERE id = ?1)",
            )?
            .execute(params![game_id, *nodes_per_position as i64, json, at])?;
        }
        StoreEvent::SessionsExpired { updated_before } => {
            let gone = tx
                .prepare_cached(PURGE_SESSIONS)?
                .execute(params![updated_before])?;
            if gone > 0 {
                tracing::debug!(rows = gone, "expired sessions deleted");
            }
        }
    }
    Ok(())
}

/// OR IGNORE like the rest: a username taken twice cannot reach here (the accounts map checks
/// it first), and must not fail other rooms' moves in the batch if it did.
fn write_account(tx: &Transaction<'_>, a: &AccountEvent, at: i64) -> rusqlite::Result<()> {
    match a {
        AccountEvent::Created {
            player_id,
            username,
            username_key,
            phc,
        } => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO accounts
                     (player_id, username, username_key, password_phc, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![player_id, username, username_key, phc, at])?;
        }
        AccountEvent::Password { player_id, phc } => {
            tx.prepare_cached("UPDATE accounts SET password_phc = ?2 WHERE player_id = ?1")?
                .execute(params![player_id, phc])?;
        }
        AccountEvent::SessionBound {
            token_hash,
            player_id,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO account_sessions (token_hash, player_id, created_at)
                 SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM accounts WHERE player_id = ?2)",
            )?
            .execute(params![token_hash, player_id, at])?;
        }
        AccountEvent::LoggedOutEverywhere { player_id } => {
            tx.prepare_cached("DELETE FROM account_sessions WHERE player_id = ?1")?
                .execute(params![player_id])?;
            // The guest rows of the same tokens too: a restart must not resume them either.
            tx.prepare_cached("DELETE FROM sessions WHERE player_id = ?1")?
                .execute(params![player_id])?;
        }
    }
    Ok(())
}

/// Deletes the session rows written before `?1` (Unix ms) that no unfinished game seats: at
/// open with `i64::MAX` (every such row), while running with the lobby's `session_ttl` ago.
const PURGE_SESSIONS: &str = "DELETE FROM sessions WHERE updated_at < ?1 AND player_id NOT IN (
     SELECT s.player_id FROM seats s JOIN games g ON g.id = s.game_id
     WHERE g.finished_at IS NULL AND s.player_id IS NOT NULL)";

const SUMMARY_COLUMNS: &str = "g.id, g.game, g.width, g.height, g.rule, g.result, g.reason,
    g.created_at, g.finished_at,
    (SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id AND m.undone IS NULL), g.fault, g.detail,
    g.casual, g.time_control, g.rated";

/// A `games` row with its two `seats` rows (written with it, in the same transaction).
fn summary_row(conn: &Connection, r: &rusqlite::Row<'_>) -> rusqlite::Result<GameSummary> {
    let id: String = r.get(0)?;
    let players = seats_of(conn, &id)?;
    Ok(GameSummary {
        id,
        game: r.get(1)?,
        width: r.get(2)?,
        height: r.get(3)?,
        rule: r.get(4)?,
        result: r.get(5)?,
        reason: r.get(6)?,
        created_at: r.get(7)?,
        finished_at: r.get(8)?,
        moves: r.get(9)?,
        fault: r.get(10)?,
        detail: r.get(11)?,
        casual: r.get(12)?,
        time_control: time_control(r.get(13)?),
        rated: r.get(14)?,
        players,
    })
}

/// A stored time control; `NULL` (none, or a game stored before v4) and, defensively, a value
/// this server cannot read are none.
pub(super) fn time_control(text: Option<String>) -> Option<TimeControl> {
    let tc: TimeControl = serde_json::from_str(text.as_deref()?)
        .map_err(|e| tracing::warn!("stored time_control {text:?} unreadable: {e}"))
        .ok()?;
    tc.is_clocked().then_some(tc)
}

/// Both seats of a game. A game without one is a damaged database, reported as such rather
/// than shown with a made-up seat.
fn seats_of(conn: &Connection, id: &str) -> rusqlite::Result<GamePlayers> {
    let mut st = conn.prepare_cached(
        "SELECT seat, kind, player_id, name, bot_level FROM seats WHERE game_id = ?1",
    )?;
    let rows = st.query_map([id], |r| {
        let seat: String = r.get(0)?;
        let kind: String = r.get(1)?;
        let rec = if kind == "bot" {
            SeatRecord::Bot {
                level: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            }
        } else {
            SeatRecord::Human {
                player_id: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                name: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            }
        };
        Ok((seat, rec))
    })?;
    let (mut x, mut o) = (None, None);
    for row in rows {
        let (seat, rec) = row?;
        if seat == "x" {
            x = Some(rec);
        } else {
            o = Some(rec);
        }
    }
    match (x, o) {
        (Some(x), Some(o)) => Ok(GamePlayers { x, o }),
        _ => Err(rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Null,
            format!("game {id} lacks a row in seats for one of its players").into(),
        )),
    }
}

fn moves_of(conn: &Connection, id: &str) -> rusqlite::Result<Vec<MoveRecord>> {
    let mut st = conn.prepare_cached(
        "SELECT x, y, seq, at_ms, clock_x_ms, clock_o_ms FROM moves
             WHERE game_id = ?1 AND undone IS NULL ORDER BY seq",
    )?;
    let rows = st.query_map([id], |r| {
        Ok(MoveRecord {
            x: r.get(0)?,
            y: r.get(1)?,
            seq: r.get::<_, i64>(2)? as u64,
            at: r.get(3)?,
            clock: match (r.get::<_, Option<i64>>(4)?, r.get::<_, Option<i64>>(5)?) {
                (Some(x), Some(o)) => Some([x.max(0) as u64, o.max(0) as u64]),
                _ => None,
            },
        })
    })?;
    rows.collect()
}

fn chat_of(conn: &Connection, id: &str) -> rusqlite::Result<Vec<ChatLine>> {
    let mut st = conn.prepare_cached(
        "SELECT seat, name, text, at_ms FROM chat WHERE game_id = ?1 ORDER BY id",
    )?;
    let rows = st.query_map([id], |r| {
        let seat: String = r.get(0)?;
        Ok(ChatLine {
            channel: ChatChannel::Players,
            from: r.get::<_, String>(1)?.into(),
            seat: Some(if seat == "o" { Seat::O } else { Seat::X }),
            text: r.get::<_, String>(2)?.into(),
            at: r.get(3)?,
        })
    })?;
    rows.collect()
}

fn game_of(conn: &Connection, id: &str) -> rusqlite::Result<Option<GameRecord>> {
    let sql = format!("SELECT {SUMMARY_COLUMNS} FROM games g WHERE g.id = ?1");
    let Some(summary) = conn
        .prepare_cached(&sql)?
        .query_row([id], |r| summary_row(conn, r))
        .optional()?
    else {
        return Ok(None);
    };
    let moves = moves_of(conn, id)?;
    let chat = chat_of(conn, id)?;
    // The last event number of the move log, a takeback's included.
    let seq: i64 = conn
        .prepare_cached(
            "SELECT COALESCE(MAX(MAX(seq, COALESCE(undone, 0))), 0) FROM moves WHERE game_id = ?1",
        )?
        .query_row([id], |r| r.get(0))?;
    Ok(Some(GameRecord {
        summary,
        moves,
        chat,
        seq: seq as u64,
    }))
}

impl Store for SqliteStore {
    fn record(&self, event: StoreEvent) -> Commit {
        self.tx.record(event)
    }

    fn flush(&self) {
        self.tx.flush()
    }

    fn restore(&self) -> Result<Restored, StoreError> {
        let conn = self.reader();
        let ids: Vec<String> = conn
            .prepare("SELECT id FROM games WHERE finished_at IS NULL ORDER BY created_at, id")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut games = Vec::new();
        for id in ids {
            if let Some(g) = game_of(&conn, &id)? {
                games.push(g);
            }
        }
        let sessions = conn
            .prepare(
                "SELECT token_hash, player_id, name FROM sessions WHERE player_id IN (
                     SELECT s.player_id FROM seats s JOIN games g ON g.id = s.game_id
                     WHERE g.finished_at IS NULL AND s.player_id IS NOT NULL)
                 ORDER BY token_hash",
            )?
            .query_map([], |r| {
                Ok(RestoredSession {
                    token_hash: r.get(0)?,
                    player_id: r.get(1)?,
                    name: r.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(Restored { games, sessions })
    }

    fn accounts(&self) -> Result<StoreAccounts, StoreError> {
        let conn = self.reader();
        let accounts = conn
            .prepare("SELECT player_id, username, password_phc FROM accounts ORDER BY player_id")?
            .query_map([], |r| {
                Ok(StoredAccount {
                    player_id: r.get(0)?,
                    username: r.get(1)?,
                    phc: r.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let tokens = conn
            .prepare("SELECT token_hash, player_id FROM account_sessions ORDER BY token_hash")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(StoreAccounts { accounts, tokens })
    }

    fn list_games(&self, q: &GameQuery) -> Result<Vec<GameSummary>, StoreError> {
        let conn = self.reader();
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM games g
             WHERE g.finished_at IS NOT NULL
               AND (?1 IS NULL OR g.finished_at < ?1
                    OR (g.finished_at = ?1 AND ?4 IS NOT NULL AND g.id < ?4))
               AND (?2 IS NULL OR EXISTS (
                   SELECT 1 FROM seats s WHERE s.game_id = g.id AND s.player_id = ?2))
             ORDER BY g.finished_at DESC, g.id DESC
             LIMIT ?3"
        );
        let (before, before_id) = match &q.before {
            Some(c) => (Some(c.finished_at), c.id.as_deref()),
            None => (None, None),
        };
        let games = conn
            .prepare_cached(&sql)?
            .query_map(params![before, q.player, q.limit, before_id], |r| {
                summary_row(&conn, r)
            })?
            .collect::<Result<_, _>>()?;
        Ok(games)
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        Ok(game_of(&self.reader(), id)?)
    }

    fn ratings(&self) -> Result<Vec<super::RatingRow>, StoreError> {
        Ok(ratings::all(&self.reader())?)
    }

    fn rating_history(&self, player_id: &str) -> Result<Vec<super::RatingHistoryRow>, StoreError> {
        Ok(ratings::history(&self.reader(), player_id)?)
    }

    fn player_record(&self, player_id: &str) -> Result<super::PlayerRecord, StoreError> {
        Ok(ratings::record(&self.reader(), player_id)?)
    }

    fn analysis(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .reader()
            .query_row("SELECT json FROM analyses WHERE game_id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?)
    }
}
