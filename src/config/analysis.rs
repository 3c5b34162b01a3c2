//! `[analysis]`: post-game analysis (docs/analysis.md): its budget and who may queue how many.

use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[analysis]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawAnalysis {
    /// Node budget of each position's search.
    pub nodes_per_position: u64,
    /// Analyses one player (an account, else a client address) may have queued or running at
    /// once.
    pub per_player: usize,
    /// Analyses queued or running on the whole server at once.
    pub max_queued: usize,
}

impl Default for RawAnalysis {
    fn default() -> RawAnalysis {
        RawAnalysis {
            nodes_per_position: 200_000,
            per_player: 2,
            max_queued: 16,
        }
    }
}

/// `[analysis]`, validated.
#[derive(Debug, Clone)]
pub struct AnalysisConfig {
    /// Node budget of each position's search (1000..=100,000,000).
    pub nodes_per_position: u64,
    /// Analyses one player (an account, else a client address) may have queued or running at
    /// once (at least 1).
    pub per_player: usize,
    /// Analyses queued or running on the whole server at once (at least `per_player`).
    pub max_queued: usize,
}

impl TryFrom<RawAnalysis> for AnalysisConfig {
    type Error = ConfigError;

    fn try_from(raw: RawAnalysis) -> Result<Self, ConfigError> {
        if !(1000..=100_000_000).contains(&raw.nodes_per_position) {
            return Err(invalid(
                "analysis.nodes_per_position",
                "must be 1000..=100000000",
            ));
        }
        if raw.per_player == 0 {
            return Err(invalid("analysis.per_player", "must be at least 1"));
        }
        if raw.max_queued < raw.per_player {
            return Err(invalid(
                "analysis.max_queued",
                "must be at least analysis.per_player",
            ));
        }
        Ok(AnalysisConfig {
            nodes_per_position: raw.nodes_per_position,
            per_player: raw.per_player,
            max_queued: raw.max_queued,
        })
    }
}
