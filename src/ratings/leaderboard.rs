//! Who a family's leaderboard lists (docs/ratings.md, "Leaderboards"): at least
//! `ratings.min_games` rated games in the family, a deviation at most `ratings.max_deviation`,
//! and a rated game within `ratings.recent_days`; best rating first.

use std::sync::Arc;

use serde::Serialize;

use super::Standing;
use crate::config::RatingsConfig;

/// One line of a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leader {
    /// 1 for the best.
    pub rank: usize,
    /// Username.
    pub name: Arc<str>,
    /// Rounded rating.
    pub rating: i64,
    /// Rounded deviation.
    pub deviation: i64,
    /// Rated games in the family.
    pub games: u32,
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// Ranks `players` (username, standing) by the rules above, at most `limit` of them. Ties in
/// rating are ordered by name, so the order is stable.
pub(super) fn rank(
    players: impl Iterator<Item = (Arc<str>, Standing)>,
    config: &RatingsConfig,
    limit: usize,
    now_ms: i64,
) -> Vec<Leader> {
    let since = now_ms - i64::from(config.recent_days) * DAY_MS;
    let mut listed: Vec<(Arc<str>, Standing)> = players
        .filter(|(_, s)| {
            s.games >= config.min_games
                && s.glicko.deviation <= config.max_deviation
                && s.last_ms >= since
        })
        .collect();
    listed.sort_by(|a, b| {
        b.1.glicko
            .rating
            .total_cmp(&a.1.glicko.rating)
            .then_with(|| a.0.cmp(&b.0))
    });
    listed
        .into_iter()
        .take(limit)
        .enumerate()
        .map(|(i, (name, s))| Leader {
            rank: i + 1,
            name,
            rating: s.glicko.rating.round() as i64,
            deviation: s.glicko.deviation.round() as i64,
            games: s.games,
        })
        .collect()
}
