//! The players' API (docs/ratings.md, docs/protocol.md "HTTP API"): profiles
//! (`/api/players/{name}`, `/api/players/{name}/games`), leaderboards (`/api/leaderboard`) and
//! the rating families and bot ratings (`/api/ratings`). Ratings are read from memory
//! ([`crate::ratings::Ratings`]); history and records from the store, in `spawn_blocking`.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use super::api::{games_page, ApiError};
use super::AppState;
use crate::accounts::Account;
use crate::ratings::{Family, PROVISIONAL_DEVIATION};

/// Players a leaderboard lists when `limit` is not given.
const LEADERBOARD_DEFAULT: usize = 50;
/// The most a leaderboard lists.
const LEADERBOARD_MAX: usize = 200;

fn no_such_player() -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        code: "no_such_player",
        message: "no player has that name".into(),
    }
}

fn bad_family() -> ApiError {
    let names: Vec<String> = Family::all().iter().map(Family::to_string).collect();
    ApiError {
        status: StatusCode::BAD_REQUEST,
        code: "bad_family",
        message: format!("family must be one of {}", names.join(", ")).into(),
    }
}

/// The account named `name` (case-insensitive); guests have no profile. In a cluster the
/// account may have been made on another node: the store is asked first.
async fn account(state: &AppState, name: &str) -> Result<std::sync::Arc<Account>, ApiError> {
    let accounts = &state.server.accounts;
    if accounts.of_username(name).is_none() {
        accounts
            .refresh(&crate::accounts::username_key(name.trim()))
            .await;
    }
    accounts.of_username(name).ok_or_else(no_such_player)
}

/// `GET /api/players/{name}`: an account's ratings, record and rating history.
pub(super) async fn player(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account(&state, &name).await?;
    let ratings: Vec<Value> = state
        .server
        .ratings
        .standings(&account.player_id)
        .into_iter()
        .map(|(family, s)| {
            json!({
                "family": family.to_string(),
                "rating": s.glicko.rating.round() as i64,
                "deviation": s.glicko.deviation.round() as i64,
                "provisional": s.glicko.deviation > PROVISIONAL_DEVIATION,
                "games": s.games,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
            })
        })
        .collect();
    let store = state.server.store.clone();
    let id = account.player_id.to_string();
    let read = tokio::task::spawn_blocking(move || {
        Ok::<_, crate::store::StoreError>((store.player_record(&id)?, store.rating_history(&id)?))
    })
    .await;
    let Ok(Ok((record, history))) = read else {
        return Err(ApiError::store());
    };
    let history: Vec<Value> = history
        .into_iter()
        .map(|h| {
            json!({
                "family": h.family,
                "game_id": h.game_id,
                "at_ms": h.at_ms,
                "rating": h.rating.round() as i64,
                "deviation": h.deviation.round() as i64,
            })
        })
        .collect();
    Ok(Json(json!({
        "name": &*account.username,
        "joined_ms": record.joined_ms,
        "ratings": ratings,
        "record": {"wins": record.wins, "draws": record.draws, "losses": record.losses},
        "history": history,
    })))
}

/// `GET /api/players/{name}/games?limit=&before=`: the account's finished games, as
/// `/api/games?player=` pages them (games played as a guest before registering included: an
/// account keeps its player id).
pub(super) async fn games(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let account = account(&state, &name).await?;
    games_page(&state, pairs, Some(account.player_id.to_string())).await
}

/// `GET /api/leaderboard?family=&limit=`.
pub(super) async fn leaderboard(
    State(state): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let (mut family, mut limit) = (None, LEADERBOARD_DEFAULT);
    for (k, v) in pairs {
        match k.as_str() {
            "family" => family = Some(v.parse::<Family>().map_err(|()| bad_family())?),
            "limit" => match v.parse::<usize>() {
                Ok(n) if (1..=LEADERBOARD_MAX).contains(&n) => limit = n,
                _ => return Err(ApiError::bad_query("limit must be 1..=200")),
            },
            _ => {}
        }
    }
    let family = family.ok_or_else(bad_family)?;
    let players = state
        .server
        .ratings
        .leaderboard(family, limit, crate::store::now_ms());
    Ok(Json(
        json!({"family": family.to_string(), "players": players}),
    ))
}

/// `GET /api/ratings`: the rating families and the bots' published ratings.
pub(super) async fn ratings(State(state): State<AppState>) -> Json<Value> {
    let families: Vec<String> = Family::all().iter().map(Family::to_string).collect();
    let bots: Vec<Value> = state
        .server
        .ratings
        .bots()
        .map(|(level, r)| json!({"level": level, "rating": r.round() as i64}))
        .collect();
    Json(json!({"families": families, "bots": bots}))
}
