//! The SQLite side of ratings (schema v9): writing a rated game's rows with its result, and the
//! reads of `GET /api/players/{name}` and of the start.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::store::{PlayerRecord, RatingHistoryRow, RatingRow, RowChange};

/// Writes a finished game's rating rows (called in the result's transaction, only when the
/// result was written). The current row is replaced only by one with more games: when two
/// games of one player end together, the later update wins whatever order the rows arrive in.
pub(super) fn write(
    tx: &Transaction<'_>,
    game_id: &str,
    rows: &[RatingRow],
    at: i64,
) -> rusqlite::Result<()> {
    for r in rows {
        tx.prepare_cached(
            "INSERT INTO ratings (player_id, family, rating, deviation, volatility, games, wins,
                 draws, losses, last_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (player_id, family) DO UPDATE SET rating = excluded.rating,
                 deviation = excluded.deviation, volatility = excluded.volatility,
                 games = excluded.games, wins = excluded.wins, draws = excluded.draws,
                 losses = excluded.losses, last_ms = excluded.last_ms
             WHERE excluded.games > ratings.games",
        )?
        .execute(params![
            r.player_id,
            r.family,
            r.rating,
            r.deviation,
            r.volatility,
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.last_ms
        ])?;
        tx.prepare_cached(
            "INSERT OR IGNORE INTO rating_history (player_id, family, game_id, at_ms, rating,
                 deviation, volatility)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            r.player_id,
            r.family,
            game_id,
            at,
            r.rating,
            r.deviation,
            r.volatility
        ])?;
    }
    Ok(())
}

/// Every current rating.
pub(super) fn all(conn: &Connection) -> rusqlite::Result<Vec<RatingRow>> {
    conn.prepare(
        "SELECT player_id, family, rating, deviation, volatility, games, wins, draws, losses,
             last_ms FROM ratings ORDER BY player_id, family",
    )?
    .query_map([], |r| {
        Ok(RatingRow {
            player_id: r.get(0)?,
            family: r.get(1)?,
            rating: r.get(2)?,
            deviation: r.get(3)?,
            volatility: r.get(4)?,
            games: r.get(5)?,
            wins: r.get(6)?,
            draws: r.get(7)?,
            losses: r.get(8)?,
            last_ms: r.get(9)?,
            change: RowChange::default(),
        })
    })?
    .collect()
}

/// An account's rated games, oldest first.
pub(super) fn history(
    conn: &Connection,
    player_id: &str,
) -> rusqlite::Result<Vec<RatingHistoryRow>> {
    conn.prepare_cached(
        "SELECT family, game_id, at_ms, rating, deviation FROM rating_history
         WHERE player_id = ?1 ORDER BY at_ms, game_id",
    )?
    .query_map([player_id], |r| {
        Ok(RatingHistoryRow {
            family: r.get(0)?,
            game_id: r.get(1)?,
            at_ms: r.get(2)?,
            rating: r.get(3)?,
            deviation: r.get(4)?,
        })
    })?
    .collect()
}

/// W/D/L over every finished game the player sat in (aborted ones not), and its account's
/// registration time.
pub(super) fn record(conn: &Connection, player_id: &str) -> rusqlite::Result<PlayerRecord> {
    let joined_ms: Option<i64> = conn
        .prepare_cached("SELECT created_at FROM accounts WHERE player_id = ?1")?
        .query_row([player_id], |r| r.get(0))
        .optional()?;
    let (wins, draws, losses) = conn
        .prepare_cached(
            "SELECT COALESCE(SUM(g.result = s.seat), 0), COALESCE(SUM(g.result = 'draw'), 0),
                 COALESCE(SUM(g.result <> s.seat AND g.result <> 'draw'), 0)
             FROM seats s JOIN games g ON g.id = s.game_id
             WHERE s.player_id = ?1 AND g.finished_at IS NOT NULL
                 AND g.reason <> 'aborted'",
        )?
        .query_row([player_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(PlayerRecord {
        joined_ms,
        wins,
        draws,
        losses,
    })
}
