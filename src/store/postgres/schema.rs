//! The PostgreSQL schema: one migration equal to SQLite's v1..v8 (docs/persistence.md), and the
//! mechanism that applies the ones a database lacks, at start, once even when several nodes
//! start together.
//!
//! Applied migrations are rows of `schema_migrations`. Every node takes the same transaction-level
//! advisory lock before it looks, so two nodes starting at once run each migration exactly once
//! (the second waits, then finds it done). A database with a migration this server does not know
//! (a newer server wrote it) is refused. Never edit a shipped migration: append the next one
//! (a new table is one more `&str` in [`MIGRATIONS`]).

use deadpool_postgres::Pool;

use crate::store::StoreError;

/// Schema migrations, in order: `MIGRATIONS[i]` is version `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // v1: everything SQLite's v1..v8 built, in one step. Ids compare bytewise (COLLATE "C"), as
    // in SQLite, so the list's `(finished_at, id)` cursor pages the same way on every server.
    r#"CREATE TABLE games (
        id           TEXT COLLATE "C" PRIMARY KEY,
        game         TEXT NOT NULL,
        width        INTEGER NOT NULL,
        height       INTEGER NOT NULL,
        rule         TEXT,
        created_at   BIGINT NOT NULL,
        finished_at  BIGINT,
        result       TEXT,
        reason       TEXT,
        fault        TEXT,
        detail       TEXT,
        casual       BOOLEAN NOT NULL DEFAULT FALSE,
        time_control TEXT
    );
    CREATE INDEX games_finished ON games (finished_at DESC, id DESC)
        WHERE finished_at IS NOT NULL;
    CREATE INDEX games_unfinished ON games (created_at, id) WHERE finished_at IS NULL;
    CREATE TABLE seats (
        game_id   TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        seat      TEXT NOT NULL,
        kind      TEXT NOT NULL,
        player_id TEXT,
        name      TEXT,
        bot_level TEXT,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX seats_player ON seats (player_id);
    CREATE TABLE moves (
        game_id    TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        seq        BIGINT NOT NULL,
        seat       TEXT NOT NULL,
        x          INTEGER NOT NULL,
        y          INTEGER NOT NULL,
        at_ms      BIGINT NOT NULL,
        undone     BIGINT,
        clock_x_ms BIGINT,
        clock_o_ms BIGINT,
        PRIMARY KEY (game_id, seq)
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        player_id  TEXT NOT NULL,
        name       TEXT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX sessions_player ON sessions (player_id);
    CREATE TABLE chat (
        id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        game_id TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        seat    TEXT NOT NULL,
        name    TEXT NOT NULL,
        text    TEXT NOT NULL,
        at_ms   BIGINT NOT NULL
    );
    CREATE INDEX chat_game ON chat (game_id, id);
    CREATE TABLE accounts (
        player_id    TEXT PRIMARY KEY,
        username     TEXT NOT NULL,
        username_key TEXT NOT NULL UNIQUE,
        password_phc TEXT NOT NULL,
        created_at   BIGINT NOT NULL
    );
    CREATE TABLE account_sessions (
        token_hash TEXT PRIMARY KEY,
        player_id  TEXT NOT NULL REFERENCES accounts (player_id),
        created_at BIGINT NOT NULL
    );
    CREATE INDEX account_sessions_player ON account_sessions (player_id);
    CREATE TABLE analyses (
        game_id            TEXT COLLATE "C" PRIMARY KEY REFERENCES games (id),
        nodes_per_position BIGINT NOT NULL,
        json               TEXT NOT NULL,
        at_ms              BIGINT NOT NULL
    );"#,
    // v2: ratings (issue 18, docs/ratings.md; SQLite's v9): whether a game is rated, each
    // account's current Glicko-2 rating per family, one history row per rated game.
    r#"ALTER TABLE games ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE;
    CREATE TABLE ratings (
        player_id  TEXT NOT NULL REFERENCES accounts (player_id),
        family     TEXT NOT NULL,
        rating     DOUBLE PRECISION NOT NULL,
        deviation  DOUBLE PRECISION NOT NULL,
        volatility DOUBLE PRECISION NOT NULL,
        games      BIGINT NOT NULL,
        wins       BIGINT NOT NULL,
        draws      BIGINT NOT NULL,
        losses     BIGINT NOT NULL,
        last_ms    BIGINT NOT NULL,
        PRIMARY KEY (player_id, family)
    );
    CREATE TABLE rating_history (
        player_id  TEXT NOT NULL REFERENCES accounts (player_id),
        family     TEXT NOT NULL,
        game_id    TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        at_ms      BIGINT NOT NULL,
        rating     DOUBLE PRECISION NOT NULL,
        deviation  DOUBLE PRECISION NOT NULL,
        volatility DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (player_id, family, game_id)
    );
    CREATE INDEX rating_history_player ON rating_history (player_id, at_ms);"#,
    // v3: room ownership in a cluster (docs/scaling.md, "Fencing"): the fence each new owner
    // of a room raises, and that every commit of the room's events checks.
    r#"CREATE TABLE room_owners (
        room_id TEXT COLLATE "C" PRIMARY KEY,
        fence   BIGINT NOT NULL,
        node    TEXT NOT NULL,
        at_ms   BIGINT NOT NULL
    );"#,
];

/// The advisory lock key every node takes while migrating ("caro" in ASCII).
const MIGRATION_LOCK: i64 = 0x6361_726f;

/// Applies the migrations the database lacks, each in the same transaction as its row in
/// `schema_migrations`; returns the version it found. Refuses a newer database.
pub async fn migrate(pool: &Pool) -> Result<u32, StoreError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            applied_at BIGINT NOT NULL
        )",
    )
    .await?;
    let found: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            &[],
        )
        .await?
        .get(0);
    let current = MIGRATIONS.len() as i32;
    if found > current {
        return Err(StoreError::Invalid(format!(
            "the database has schema version {found}, newer than this server's {current}"
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i32 + 1;
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
            &[&version, &crate::store::now_ms()],
        )
        .await?;
        tracing::info!(version, "PostgreSQL database migrated");
    }
    tx.commit().await?;
    Ok(found as u32)
}
