//! What a store keeps of ratings (docs/ratings.md): each account's current Glicko-2 rating per
//! family, one history row per rated game, and the W/D/L record read from the games. Plain data:
//! the decisions (who is rated, the Glicko-2 update) are `crate::ratings`'; a store only writes
//! these rows in the transaction of the game's result (`StoreEvent::Result`'s `ratings`) and
//! reads them back.

/// An account's rating in one family after a game (written with the game's result, and read
/// back at start).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RatingRow {
    /// The account's player id.
    pub player_id: String,
    /// The family, e.g. `caro-blitz`.
    pub family: String,
    /// Glicko-2 rating.
    pub rating: f64,
    /// Glicko-2 deviation.
    pub deviation: f64,
    /// Glicko-2 volatility.
    pub volatility: f64,
    /// Rated games in the family, this one included.
    pub games: u32,
    /// Of which won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
    /// Unix ms of the last rated game in the family (this one).
    pub last_ms: i64,
    /// What this game changed (zero in rows read back): a store whose row another node changed
    /// meanwhile adds it to the row instead of replacing the row (PostgreSQL).
    #[serde(default)]
    pub change: RowChange,
}

/// One game's change of a rating row.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowChange {
    /// The rating the game was settled from (the row had `games - 1` games then).
    pub from: f64,
    /// Rating after the game less rating before it.
    pub rating: f64,
    /// 1 if the game was won, else 0.
    pub wins: u32,
    /// 1 if drawn.
    pub draws: u32,
    /// 1 if lost.
    pub losses: u32,
}

/// One rated game in an account's history.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingHistoryRow {
    /// The family.
    pub family: String,
    /// The game.
    pub game_id: String,
    /// Unix ms, when its result was recorded.
    pub at_ms: i64,
    /// The rating after the game.
    pub rating: f64,
    /// The deviation after the game.
    pub deviation: f64,
}

/// An account's record over every finished game (casual ones included, aborted ones not), and
/// when it registered.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerRecord {
    /// Unix ms of registration; `None` when the player id has no account.
    pub joined_ms: Option<i64>,
    /// Games won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
}
