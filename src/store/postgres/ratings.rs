//! The PostgreSQL side of ratings' reads (schema v2; SQLite's are in `src/store/sqlite/ratings.rs`,
//! the writes in `write.rs`): the book loaded at start, and `GET /api/players/{name}`.

use deadpool_postgres::Client;

use crate::store::{PlayerRecord, RatingHistoryRow, RatingRow, RowChange, StoreError};

/// A count column, as the store's rows keep it.
fn count(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

/// Every current rating.
pub(super) async fn all(client: &Client) -> Result<Vec<RatingRow>, StoreError> {
    let rows = client
        .query(
            "SELECT player_id, family, rating, deviation, volatility, games, wins, draws, losses,
                 last_ms FROM ratings ORDER BY player_id, family",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| RatingRow {
            player_id: r.get(0),
            family: r.get(1),
            rating: r.get(2),
            deviation: r.get(3),
            volatility: r.get(4),
            games: count(r.get(5)),
            wins: count(r.get(6)),
            draws: count(r.get(7)),
            losses: count(r.get(8)),
            last_ms: r.get(9),
            change: RowChange::default(),
        })
        .collect())
}

/// An account's rated games, oldest first.
pub(super) async fn history(
    client: &Client,
    player_id: &str,
) -> Result<Vec<RatingHistoryRow>, StoreError> {
    let rows = client
        .query(
            "SELECT family, game_id, at_ms, rating, deviation FROM rating_history
             WHERE player_id = $1 ORDER BY at_ms, game_id",
            &[&player_id],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| RatingHistoryRow {
            family: r.get(0),
            game_id: r.get(1),
            at_ms: r.get(2),
            rating: r.get(3),
            deviation: r.get(4),
        })
        .collect())
}

/// W/D/L over every finished game the player sat in (aborted ones not), and its account's
/// registration time.
pub(super) async fn record(client: &Client, player_id: &str) -> Result<PlayerRecord, StoreError> {
    let joined_ms: Option<i64> = client
        .query_opt(
            "SELECT created_at FROM accounts WHERE player_id = $1",
            &[&player_id],
        )
        .await?
        .map(|r| r.get(0));
    let r = client
        .query_one(
            "SELECT COUNT(*) FILTER (WHERE g.result = s.seat),
                 COUNT(*) FILTER (WHERE g.result = 'draw'),
                 COUNT(*) FILTER (WHERE g.result <> s.seat AND g.result <> 'draw')
             FROM seats s JOIN games g ON g.id = s.game_id
             WHERE s.player_id = $1 AND g.finished_at IS NOT NULL AND g.reason <> 'aborted'",
            &[&player_id],
        )
        .await?;
    Ok(PlayerRecord {
        joined_ms,
        wins: count(r.get(0)),
        draws: count(r.get(1)),
        losses: count(r.get(2)),
    })
}
