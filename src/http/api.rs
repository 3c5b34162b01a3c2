//! The JSON API (`/api/rooms`, `/api/bots`, the replay API under `/api/games`), `/metrics` and
//! `/healthz`. Store reads run in `spawn_blocking`: they do file I/O.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{plain, AppState};
use crate::store::{Cursor, GameQuery};

/// A refusal of the API: its status and a JSON body
/// `{"error": {"code": ..., "message": ...}}` whose `code` clients can match on.
#[derive(Debug)]
pub struct ApiError {
    pub(super) status: StatusCode,
    pub(super) code: &'static str,
    pub(super) message: std::borrow::Cow<'static, str>,
}

impl ApiError {
    pub(super) fn bad_query(message: &'static str) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            code: "bad_query",
            message: message.into(),
        }
    }

    fn not_found() -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            code: "not_found",
            message: "no such game".into(),
        }
    }

    pub(super) fn store() -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "store",
            message: "the game database could not be read".into(),
        }
    }
}

impl From<crate::analysis::StartError> for ApiError {
    fn from(e: crate::analysis::StartError) -> ApiError {
        use crate::analysis::StartError as E;
        let (status, code, message) = match e {
            E::NotFinished => (
                StatusCode::CONFLICT,
                "game_not_finished",
                "only a finished game can be analysed",
            ),
            E::Running => (
                StatusCode::CONFLICT,
                "analysis_running",
                "an analysis of this game is already running",
            ),
            E::PlayerCap => (
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_analyses",
                "you have as many analyses queued as allowed; wait for one to finish",
            ),
            E::ServerCap => (
                StatusCode::TOO_MANY_REQUESTS,
                "analysis_queue_full",
                "the server's analysis queue is full; try again later",
            ),
            E::Unplayable => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "unplayable",
                "the stored game cannot be replayed by this server",
            ),
        };
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

/// `GET /healthz`.
pub(super) async fn healthz() -> Response {
    plain(StatusCode::OK, "ok\n")
}

/// `GET /metrics`, in Prometheus' text format.
pub(super) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        state.server.metrics.render(),
    )
}

/// `GET /api/rooms?limit=&after=`: the lobby's open rooms by id, a page of at most
/// `limits.room_list_page` at a time (as `list_rooms`), with `next` when more follow.
pub(super) async fn rooms(
    State(state): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let page = state.server.config.limits.room_list_page;
    let (mut limit, mut after) = (page, None);
    for (k, v) in pairs {
        match k.as_str() {
            "limit" => match v.parse::<usize>() {
                Ok(n) if n >= 1 => limit = n.min(page),
                _ => return Err(ApiError::bad_query("limit must be a positive number")),
            },
            "after" => after = Some(v),
            _ => {}
        }
    }
    let (rooms, next) = state.server.lobby.summaries_page(after.as_deref(), limit);
    let mut body = json!({ "rooms": rooms });
    if let Some(next) = next {
        body["next"] = next.into();
    }
    Ok(Json(body))
}

/// `GET /api/bots`: the bot levels, in the config file's order.
pub(super) async fn bots(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "bots": state.server.bots.infos() }))
}

/// `GET /api/games?player=&limit=&before=`: finished games, newest first, a page at a time.
pub(super) async fn list_games(
    State(state): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    games_page(&state, pairs, None).await
}

/// A page of finished games, newest first: `{"games": [...], "next": ...}`. `player` (a player
/// id) overrides any `player` key of the query. Pairs rather than a struct so that a repeated
/// key is not an error (the last one wins) and a bad value gets the API's own `bad_query`.
pub(super) async fn games_page(
    state: &AppState,
    pairs: Vec<(String, String)>,
    player: Option<String>,
) -> Result<Json<Value>, ApiError> {
    let mut q = GameQuery {
        limit: 20,
        ..Default::default()
    };
    for (k, v) in pairs {
        match k.as_str() {
            "player" if !v.is_empty() => q.player = Some(v),
            "player" => {}
            "limit" => match v.parse::<u32>() {
                Ok(n) if (1..=100).contains(&n) => q.limit = n,
                _ => return Err(ApiError::bad_query("limit must be 1..=100")),
            },
            "before" => match v.parse() {
                Ok(c) => q.before = Some(c),
                _ => {
                    return Err(ApiError::bad_query(
                        "before must be a time in unix milliseconds or a page's `next`",
                    ))
                }
            },
            _ => {}
        }
    }
    if player.is_some() {
        q.player = player;
    }
    let store = state.server.store.clone();
    let limit = q.limit as usize;
    let Ok(Ok(games)) = tokio::task::spawn_blocking(move || store.list_games(&q)).await else {
        return Err(ApiError::store());
    };
    // A full page may have a successor: its cursor continues exactly after the last game. A
    // short page is the last one.
    let next = (games.len() == limit)
        .then(|| games.last().and_then(Cursor::after))
        .flatten()
        .map(|c| c.to_string());
    Ok(Json(json!({ "games": games, "next": next })))
}

/// `GET /api/games/{id}` (JSON with moves), `/api/games/{id}.json` and `/api/games/{id}.psq`
/// (downloads).
pub(super) async fn game(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    if let Some(id) = name.strip_suffix("/analysis") {
        return analysis(State(state), id.to_string())
            .await
            .map(IntoResponse::into_response);
    }
    if name.contains('/') {
        return Err(ApiError::not_found());
    }
    let (id, format) = match name.rsplit_once('.') {
        Some((id, "psq")) => (id.to_string(), "psq"),
        Some((id, "json")) => (id.to_string(), "json"),
        _ => (name, ""),
    };
    let store = state.server.store.clone();
    let lookup = id.clone();
    let game = match tokio::task::spawn_blocking(move || store.game(&lookup)).await {
        Ok(Ok(Some(g))) => g,
        Ok(Ok(None)) => return Err(ApiError::not_found()),
        _ => return Err(ApiError::store()),
    };
    // Ids are ours (hex), but never put client bytes in a header unchecked.
    let safe: String = id.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let attachment = |ext: &str| {
        HeaderValue::from_str(&format!("attachment; filename=\"caro-{safe}.{ext}\""))
            .expect("ascii alphanumerics make a valid header value")
    };
    let json = || Json(serde_json::to_value(&game).unwrap_or_default());
    Ok(match format {
        "psq" => (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                ),
                (header::CONTENT_DISPOSITION, attachment("psq")),
            ],
            crate::store::psq::write(&game),
        )
            .into_response(),
        "json" => ([(header::CONTENT_DISPOSITION, attachment("json"))], json()).into_response(),
        _ => json().into_response(),
    })
}

/// A stored game by id, read in `spawn_blocking`.
async fn stored_game(state: &AppState, id: String) -> Result<crate::store::GameRecord, ApiError> {
    let store = state.server.store.clone();
    match tokio::task::spawn_blocking(move || store.game(&id)).await {
        Ok(Ok(Some(g))) => Ok(g),
        Ok(Ok(None)) => Err(ApiError::not_found()),
        _ => Err(ApiError::store()),
    }
}

/// `POST /api/games/{id}/analysis`: starts analysing a finished game (docs/analysis.md); 202
/// with its progress. The per-player cap counts by account when the request carries an
/// account's session token (`Authorization: Bearer <token>`), else by client address. Any other
/// POST under `/api/games/` is 404.
pub(super) async fn start_analysis(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let Some(id) = name
        .strip_suffix("/analysis")
        .filter(|id| !id.contains('/'))
    else {
        return Err(ApiError::not_found());
    };
    let id = id.to_string();
    let game = stored_game(&state, id).await?;
    let requester = match bearer_account(&state, &headers) {
        Some(player_id) => format!("account:{player_id}"),
        None => format!("address:{}", peer.ip()),
    };
    let progress = state
        .server
        .analyses
        .start(&state.server, &game, requester)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"status": "running", "done": progress.done, "total": progress.total})),
    )
        .into_response())
}

/// The player id of the account whose session token is the request's bearer token; `None`
/// without one, or for a guest's or an unknown token (never an error: the caller falls back to
/// the address).
fn bearer_account(state: &AppState, headers: &HeaderMap) -> Option<std::sync::Arc<str>> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    let account = state
        .server
        .accounts
        .of_token(&crate::store::hash_token(token))?;
    Some(account.player_id.clone())
}

/// `GET /api/games/{id}/analysis`: the stored analysis (`status: "done"`), the progress of a
/// running one (`"running"`), or `"none"`.
async fn analysis(State(state): State<AppState>, id: String) -> Result<Json<Value>, ApiError> {
    if id.contains('/') {
        return Err(ApiError::not_found());
    }
    if let Some(p) = state.server.analyses.progress(&id) {
        return Ok(Json(
            json!({"status": "running", "done": p.done, "total": p.total}),
        ));
    }
    let game = stored_game(&state, id.clone()).await?;
    let store = state.server.store.clone();
    let stored = match tokio::task::spawn_blocking(move || store.analysis(&id)).await {
        Ok(Ok(a)) => a,
        _ => return Err(ApiError::store()),
    };
    // Finished between the two looks: the store has it now.
    let Some(text) = stored else {
        return Ok(Json(json!({"status": "none"})));
    };
    let mut analysis: crate::analysis::Analysis =
        serde_json::from_str(&text).map_err(|_| ApiError::store())?;
    let played: Vec<crate::analysis::Cell> = game
        .moves
        .iter()
        .map(|m| crate::analysis::Cell { x: m.x, y: m.y })
        .collect();
    analysis.judge(&played);
    Ok(Json(json!({
        "status": "done",
        "game": game.summary.id,
        "thresholds": {
            "mistake": crate::analysis::MISTAKE_DROP,
            "blunder": crate::analysis::BLUNDER_DROP,
            "cap": crate::analysis::EVAL_CAP,
        },
        "analysis": analysis,
    })))
}
