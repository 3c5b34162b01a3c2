//! The writer's statements: one per kind of event, each tolerant (`ON CONFLICT`, `WHERE
//! EXISTS` for rows of a game), because in PostgreSQL one failing statement aborts the whole
//! transaction, other rooms' moves with it.

use std::collections::HashMap;

use deadpool_postgres::Transaction;
use tokio_postgres::types::ToSql;

use crate::store::{
    outcome_str, reason_str, seat_str, AccountClaim, AccountEvent, NewAccount, RatingRow,
    SeatRecord, StoreError, StoreEvent,
};

/// One cached statement, executed.
async fn exec(
    tx: &Transaction<'_>,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, tokio_postgres::Error> {
    let st = tx.prepare_cached(sql).await?;
    tx.execute(&st, params).await
}

/// A new account's row, written at once ([`crate::store::Store::claim_account`]): the unique
/// `username_key` and `player_id` make the insert the cluster-wide check, and a conflict says
/// which of the two was taken. The same player and name again (a retry) is `Written`.
pub(super) async fn claim_account(
    client: &deadpool_postgres::Client,
    a: &NewAccount,
    at: i64,
) -> Result<AccountClaim, StoreError> {
    let inserted = client
        .execute(
            "INSERT INTO accounts (player_id, username, username_key, password_phc, created_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&a.player_id, &a.username, &a.username_key, &a.phc, &at],
        )
        .await?;
    if inserted == 1 {
        return Ok(AccountClaim::Written);
    }
    let holder: Option<String> = client
        .query_opt(
            "SELECT player_id FROM accounts WHERE username_key = $1",
            &[&a.username_key],
        )
        .await?
        .map(|r| r.get(0));
    Ok(match holder {
        Some(p) if p == a.player_id => {
            // A retry (the first answer was lost): its password is the one the player now knows.
            client
                .execute(
                    "UPDATE accounts SET password_phc = $2 WHERE player_id = $1",
                    &[&a.player_id, &a.phc],
                )
                .await?;
            AccountClaim::Written
        }
        Some(_) => AccountClaim::Taken,
        None => AccountClaim::AlreadyAccount,
    })
}

pub(super) async fn write_event(
    tx: &Transaction<'_>,
    event: &StoreEvent,
    at: i64,
) -> Result<(), tokio_postgres::Error> {
    match event {
        StoreEvent::Created(c) => {
            let tc = c
                .time_control
                .is_clocked()
                .then(|| serde_json::to_string(&c.time_control).unwrap_or_default());
            let (w, h) = (i32::from(c.width), i32::from(c.height));
            exec(
                tx,
                "INSERT INTO games (id, game, width, height, rule, created_at, casual, time_control,
                     rated)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
                &[&c.room_id, &c.game, &w, &h, &c.rule, &at, &c.casual, &tc, &c.rated],
            )
            .await?;
            for (seat, rec) in ["x", "o"].into_iter().zip(&c.seats) {
                let (kind, player_id, name, level) = match rec {
                    SeatRecord::Human { player_id, name } => {
                        ("human", Some(player_id), Some(name), None)
                    }
                    SeatRecord::Bot { level } => ("bot", None, None, Some(level)),
                };
                exec(
                    tx,
                    "INSERT INTO seats (game_id, seat, kind, player_id, name, bot_level)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (game_id, seat) DO UPDATE SET kind = excluded.kind,
                         player_id = excluded.player_id, name = excluded.name,
                         bot_level = excluded.bot_level",
                    &[&c.room_id, &seat, &kind, &player_id, &name, &level],
                )
                .await?;
            }
        }
        StoreEvent::Move {
            room_id,
            seq,
            seat,
            cell,
            clock,
        } => {
            let (x, y) = (i32::from(cell[0]), i32::from(cell[1]));
            let (cx, co) = (clock.map(|c| c[0] as i64), clock.map(|c| c[1] as i64));
            exec(
                tx,
                "INSERT INTO moves (game_id, seq, seat, x, y, at_ms, clock_x_ms, clock_o_ms)
                 SELECT $1, $2, $3, $4, $5, $6, $7, $8
                 WHERE EXISTS (SELECT 1 FROM games WHERE id = $1)
                 ON CONFLICT DO NOTHING",
                &[
                    room_id,
                    &(*seq as i64),
                    &seat_str(*seat),
                    &x,
                    &y,
                    &at,
                    &cx,
                    &co,
                ],
            )
            .await?;
        }
        StoreEvent::Result {
            room_id,
            result,
            reason,
            forfeit,
            ratings,
            ..
        } => {
            let fault = forfeit.as_ref().map(|f| f.fault.as_str());
            let detail = forfeit.as_ref().map(|f| f.detail.as_str());
            let written = exec(
                tx,
                "UPDATE games SET result = $2, reason = $3, finished_at = $4, fault = $5,
                     detail = $6
                 WHERE id = $1 AND finished_at IS NULL",
                &[
                    room_id,
                    &outcome_str(*result),
                    &reason_str(*reason),
                    &at,
                    &fault,
                    &detail,
                ],
            )
            .await?;
            // The rating rows only with the result they come from (never twice).
            if written == 1 {
                write_ratings(tx, room_id, ratings, at).await?;
            }
        }
        StoreEvent::Session {
            token_hash,
            player_id,
            name,
        } => {
            exec(
                tx,
                "INSERT INTO sessions (token_hash, player_id, name, updated_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (token_hash) DO UPDATE SET name = excluded.name,
                     updated_at = excluded.updated_at",
                &[token_hash, player_id, name, &at],
            )
            .await?;
        }
        StoreEvent::Takeback {
            room_id,
            seq,
            plies,
        } => {
            exec(
                tx,
                "UPDATE moves SET undone = $2 WHERE game_id = $1 AND seq IN (
                     SELECT seq FROM moves WHERE game_id = $1 AND undone IS NULL
                     ORDER BY seq DESC LIMIT $3)",
                &[room_id, &(*seq as i64), &i64::from(*plies)],
            )
            .await?;
        }
        StoreEvent::Chat {
            room_id,
            seat,
            name,
            text,
            at,
        } => {
            exec(
                tx,
                "INSERT INTO chat (game_id, seat, name, text, at_ms)
                 SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM games WHERE id = $1)",
                &[room_id, &seat_str(*seat), name, text, at],
            )
            .await?;
        }
        StoreEvent::Account(a) => write_account(tx, a, at).await?,
        // Written by the batch itself (`super::write_batch`), which keeps the fence it raised.
        StoreEvent::Owner { .. } => {}
        StoreEvent::Analysis {
            game_id,
            nodes_per_position,
            json,
        } => {
            exec(
                tx,
                "INSERT INTO analyses (game_id, nodes_per_position, json, at_ms)
                 SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM games WHERE id = $1)
                 ON CONFLICT (game_id) DO UPDATE SET nodes_per_position =
                     excluded.nodes_per_position, json = excluded.json, at_ms = excluded.at_ms",
                &[game_id, &(*nodes_per_position as i64), json, &at],
            )
            .await?;
        }
        StoreEvent::SessionsExpired { updated_before } => {
            let gone = exec(tx, PURGE_SESSIONS, &[updated_before]).await?;
            if gone > 0 {
                tracing::debug!(rows = gone, "expired sessions deleted");
            }
            // The fences of games finished as long ago: no node commits for them any more (a
            // node that still held one finds no row, which refuses its commit like a raised
            // fence would).
            let gone = exec(
                tx,
                "DELETE FROM room_owners o USING games g
                 WHERE g.id = o.room_id AND g.finished_at < $1",
                &[updated_before],
            )
            .await?;
            if gone > 0 {
                tracing::debug!(rows = gone, "fences of finished games deleted");
            }
        }
    }
    Ok(())
}

/// Tolerant like the rest: the server writes a new account through `claim_account` (the
/// uniqueness check), not here; an `AccountEvent::Created` that comes here anyway must not
/// fail other rooms' moves in the batch.
async fn write_account(
    tx: &Transaction<'_>,
    a: &AccountEvent,
    at: i64,
) -> Result<(), tokio_postgres::Error> {
    match a {
        AccountEvent::Created {
            player_id,
            username,
            username_key,
            phc,
        } => {
            exec(
                tx,
                "INSERT INTO accounts (player_id, username, username_key, password_phc,
                     created_at)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[player_id, username, username_key, phc, &at],
            )
            .await?;
        }
        AccountEvent::Password { player_id, phc } => {
            exec(
                tx,
                "UPDATE accounts SET password_phc = $2 WHERE player_id = $1",
                &[player_id, phc],
            )
            .await?;
        }
        AccountEvent::SessionBound {
            token_hash,
            player_id,
        } => {
            exec(
                tx,
                "INSERT INTO account_sessions (token_hash, player_id, created_at)
                 SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM accounts WHERE player_id = $2)
                 ON CONFLICT (token_hash) DO UPDATE SET player_id = excluded.player_id,
                     created_at = excluded.created_at",
                &[token_hash, player_id, &at],
            )
            .await?;
        }
        AccountEvent::LoggedOutEverywhere { player_id } => {
            exec(
                tx,
                "DELETE FROM account_sessions WHERE player_id = $1",
                &[player_id],
            )
            .await?;
            // The guest rows of the same tokens too: a restart must not resume them either.
            exec(
                tx,
                "DELETE FROM sessions WHERE player_id = $1",
                &[player_id],
            )
            .await?;
        }
    }
    Ok(())
}

/// Deletes the session rows written before `$1` (Unix ms) that no unfinished game seats.
pub(super) const PURGE_SESSIONS: &str =
    "DELETE FROM sessions WHERE updated_at < $1 AND player_id NOT IN (
     SELECT s.player_id FROM seats s JOIN games g ON g.id = s.game_id
     WHERE g.finished_at IS NULL AND s.player_id IS NOT NULL)";

/// A finished game's rating rows (`StoreEvent::Result`'s `ratings`), each computed from the
/// row as its node's book had it. When the row is still that one (one game fewer, the same
/// rating), it is replaced, as in SQLite (`src/store/sqlite/ratings.rs`). When another node
/// wrote a game of the same account meanwhile (two rated games ending together on two nodes),
/// this game's change is added to the row instead, so neither game is lost (docs/scaling.md,
/// "Identities"). The history row has the rating the row ends with.
async fn write_ratings(
    tx: &Transaction<'_>,
    game_id: &str,
    rows: &[RatingRow],
    at: i64,
) -> Result<(), tokio_postgres::Error> {
    // `same`: the row is the one the game was settled from.
    let upsert = tx
        .prepare_cached(
            "INSERT INTO ratings (player_id, family, rating, deviation, volatility, games, wins,
                 draws, losses, last_ms)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
             WHERE EXISTS (SELECT 1 FROM accounts WHERE player_id = $1)
             ON CONFLICT (player_id, family) DO UPDATE SET
                 rating = CASE WHEN ratings.games = excluded.games - 1 AND ratings.rating = $15
                     THEN excluded.rating ELSE ratings.rating + $11 END,
                 deviation = CASE WHEN ratings.games = excluded.games - 1
                     AND ratings.rating = $15 THEN excluded.deviation
                     ELSE LEAST(ratings.deviation, excluded.deviation) END,
                 volatility = excluded.volatility,
                 games = ratings.games + 1,
                 wins = ratings.wins + $12,
                 draws = ratings.draws + $13,
                 losses = ratings.losses + $14,
                 last_ms = GREATEST(ratings.last_ms, excluded.last_ms)
             RETURNING rating, deviation, volatility",
        )
        .await?;
    for r in rows {
        let counts = [r.games, r.wins, r.draws, r.losses].map(i64::from);
        let c = &r.change;
        let added = [c.wins, c.draws, c.losses].map(i64::from);
        let Some(now) = tx
            .query_opt(
                &upsert,
                &[
                    &r.player_id,
                    &r.family,
                    &r.rating,
                    &r.deviation,
                    &r.volatility,
                    &counts[0],
                    &counts[1],
                    &counts[2],
                    &counts[3],
                    &r.last_ms,
                    &c.rating,
                    &added[0],
                    &added[1],
                    &added[2],
                    &c.from,
                ],
            )
            .await?
        else {
            continue; // no such account
        };
        let (rating, deviation, volatility): (f64, f64, f64) = (now.get(0), now.get(1), now.get(2));
        exec(
            tx,
            "INSERT INTO rating_history (player_id, family, game_id, at_ms, rating, deviation,
                 volatility)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT DO NOTHING",
            &[
                &r.player_id,
                &r.family,
                &game_id,
                &at,
                &rating,
                &deviation,
                &volatility,
            ],
        )
        .await?;
    }
    Ok(())
}

/// Raises room `room`'s fence for `node` and returns it. A room's first fence is the time
/// (Unix ms), not 1: a row the purge deleted (its game finished long ago) and raised again then
/// starts far above any fence a node may still hold for it.
pub(super) async fn raise_fence(
    tx: &Transaction<'_>,
    room: &str,
    node: &str,
    at: i64,
) -> Result<i64, tokio_postgres::Error> {
    let st = tx
        .prepare_cached(
            "INSERT INTO room_owners (room_id, fence, node, at_ms) VALUES ($1, $3, $2, $3)
             ON CONFLICT (room_id) DO UPDATE SET fence = room_owners.fence + 1,
                 node = excluded.node, at_ms = excluded.at_ms
             RETURNING fence",
        )
        .await?;
    Ok(tx.query_one(&st, &[&room, &node, &at]).await?.get(0))
}

/// Deletes room `room`'s `room_owners` row if it still has `fence` and the room never stored a
/// game: a room closed before its game started (the purge of finished games never sees it).
/// A room with a game keeps its row: it may be restored, and the purge takes it once finished.
pub(super) async fn drop_unstarted_fence(
    tx: &Transaction<'_>,
    room: &str,
    fence: i64,
) -> Result<(), tokio_postgres::Error> {
    let st = tx
        .prepare_cached(
            "DELETE FROM room_owners o WHERE o.room_id = $1 AND o.fence = $2
             AND NOT EXISTS (SELECT 1 FROM games g WHERE g.id = o.room_id)",
        )
        .await?;
    tx.execute(&st, &[&room, &fence]).await?;
    Ok(())
}

/// Which of the rooms in `held` (room to the fence this node holds) still have that fence, in
/// one statement. Locks their rows until the transaction ends, so a new owner's
/// [`raise_fence`] waits for this batch and then reads the game after it.
pub(super) async fn hold_fences<'a>(
    tx: &Transaction<'_>,
    held: &HashMap<&'a str, i64>,
) -> Result<HashMap<&'a str, bool>, tokio_postgres::Error> {
    if held.is_empty() {
        return Ok(HashMap::new());
    }
    let rooms: Vec<&str> = held.keys().copied().collect();
    let st = tx
        .prepare_cached(
            "SELECT room_id, fence FROM room_owners WHERE room_id = ANY($1) ORDER BY room_id
             FOR SHARE",
        )
        .await?;
    let now: HashMap<String, i64> = tx
        .query(&st, &[&rooms])
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(held
        .iter()
        .map(|(room, fence)| (*room, now.get(*room) == Some(fence)))
        .collect())
}
