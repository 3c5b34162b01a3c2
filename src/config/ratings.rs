//! `[ratings]`: who appears on a leaderboard, and how sure a bot's published rating is taken to
//! be (docs/ratings.md). The bots' ratings themselves are `rating` in each `[bots.*]` table.

use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[ratings]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawRatings {
    /// Rated games in a family a player needs to be listed on its leaderboard.
    pub min_games: u32,
    /// Largest rating deviation a listed player may have.
    pub max_deviation: f64,
    /// A listed player's last rated game in the family is at most this many days old.
    pub recent_days: u32,
    /// The deviation a bot's fixed rating is played with (its opponent's update uses it).
    pub bot_deviation: f64,
    /// Quick pairing: the largest rating gap two rated seekers are paired across at once.
    pub pairing_range: u32,
    /// Quick pairing: how much that gap widens for each second a seek has waited.
    pub pairing_widen_per_sec: u32,
}

impl Default for RawRatings {
    fn default() -> RawRatings {
        RawRatings {
            min_games: 5,
            max_deviation: 110.0,
            recent_days: 30,
            bot_deviation: 50.0,
            pairing_range: 200,
            pairing_widen_per_sec: 25,
        }
    }
}

/// `[ratings]`, validated.
#[derive(Debug, Clone)]
pub struct RatingsConfig {
    /// Rated games in a family to be listed (at least 1).
    pub min_games: u32,
    /// Largest deviation of a listed player (1..=350).
    pub max_deviation: f64,
    /// Days since the last rated game in the family (at least 1).
    pub recent_days: u32,
    /// A bot's deviation (1..=350).
    pub bot_deviation: f64,
    /// The rating gap quick pairing bridges at once.
    pub pairing_range: u32,
    /// How much it widens per second waited.
    pub pairing_widen_per_sec: u32,
}

impl Default for RatingsConfig {
    fn default() -> RatingsConfig {
        RawRatings::default()
            .try_into()
            .expect("the defaults are valid")
    }
}

impl TryFrom<RawRatings> for RatingsConfig {
    type Error = ConfigError;

    fn try_from(raw: RawRatings) -> Result<Self, ConfigError> {
        if raw.min_games == 0 {
            return Err(invalid("ratings.min_games", "must be at least 1"));
        }
        if !(1.0..=350.0).contains(&raw.max_deviation) {
            return Err(invalid("ratings.max_deviation", "must be 1..=350"));
        }
        if raw.recent_days == 0 {
            return Err(invalid("ratings.recent_days", "must be at least 1"));
        }
        if !(1.0..=350.0).contains(&raw.bot_deviation) {
            return Err(invalid("ratings.bot_deviation", "must be 1..=350"));
        }
        Ok(RatingsConfig {
            min_games: raw.min_games,
            max_deviation: raw.max_deviation,
            recent_days: raw.recent_days,
            bot_deviation: raw.bot_deviation,
            pairing_range: raw.pairing_range,
            pairing_widen_per_sec: raw.pairing_widen_per_sec,
        })
    }
}
