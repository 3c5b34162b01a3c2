//! Operator settings: `config.toml` is read into [`RawConfig`] (serde, defaults, unknown keys are
//! errors), then each section is validated once into its own typed struct (`[limits]` into
//! [`Limits`], ...), nested in [`Config`], the settings the server uses. Every validation error
//! names its key (`limits.max_frame_bytes: must be at least 256`), so an invalid file fails at
//! start with a message the operator can act on.
//!
//! One file per section: [`server`], [`limits`], [`rooms`], [`chat`], [`store`], and [`bots`] for
//! `[search]` and the `[bots.*]` levels (built-in and outside engines). A check that needs two
//! keys lives with the section holding both; no check spans sections.
//!
//! Nothing here is read again after start-up, and nothing here starts anything: this module only
//! reads and checks.

pub mod analysis;
pub mod bots;
pub mod chat;
pub mod cluster;
pub mod limits;
pub mod ratings;
pub mod rooms;
pub mod server;
pub mod store;

use std::path::Path;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;

pub use analysis::{AnalysisConfig, RawAnalysis};
pub use bots::{BotConfig, BotEngine, OutsideConfig, RawBot, RawSearch, SearchConfig};
pub use chat::{ChatConfig, RawChat};
pub use cluster::{ClusterConfig, RawCluster};
pub use limits::{Limits, RawLimits};
pub use ratings::{RatingsConfig, RawRatings};
pub use rooms::{RawRooms, RoomsConfig};
pub use server::{AllowedOrigins, Origin, RawServer, ServerConfig};
pub use store::{RawStore, StoreConfig};

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys or wrong types.
    #[error("{0}")]
    Parse(String),
    /// A key has a value we refuse.
    #[error("{key}: {message}")]
    Invalid {
        /// The dotted key, e.g. `limits.max_frame_bytes`.
        key: String,
        /// What is wrong with it.
        message: String,
    },
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

/// A `*_ms` key as a [`Duration`], at least `min` milliseconds.
fn ms(key: &str, value: u64, min: u64) -> Result<Duration, ConfigError> {
    if value < min {
        return Err(invalid(key, format!("must be at least {min}")));
    }
    Ok(Duration::from_millis(value))
}

/// The file as written. Every key has a default.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RawConfig {
    /// `[server]`
    pub server: RawServer,
    /// `[limits]`
    pub limits: RawLimits,
    /// `[rooms]`
    pub rooms: RawRooms,
    /// `[chat]`
    pub chat: RawChat,
    /// `[search]`
    pub search: RawSearch,
    /// `[store]`
    pub store: RawStore,
    /// `[analysis]`
    pub analysis: RawAnalysis,
    /// `[ratings]`
    pub ratings: RawRatings,
    /// `[cluster]`; absent: a single node.
    pub cluster: Option<RawCluster>,
    /// `[bots.<name>]`; none at all: the shipped levels.
    pub bots: Option<IndexMap<String, RawBot>>,
}

/// The validated configuration the server runs with, one field per section of the file.
#[derive(Debug, Clone)]
pub struct Config {
    /// `[server]`: listen address, log filter, connection timings.
    pub server: ServerConfig,
    /// `[limits]`: sizes and rates.
    pub limits: Limits,
    /// `[rooms]`: room and lobby timings.
    pub rooms: RoomsConfig,
    /// `[chat]`: line length, rate and history.
    pub chat: ChatConfig,
    /// `[search]`: bot search concurrency, progress throttle, minimum move time, priority.
    pub search: SearchConfig,
    /// `[store]`: the game database.
    pub store: StoreConfig,
    /// `[analysis]`: post-game analysis budget and caps.
    pub analysis: AnalysisConfig,
    /// `[ratings]`: leaderboard rules and the bots' deviation.
    pub ratings: RatingsConfig,
    /// `[cluster]`: Redis, node id and lease when this node is one of several.
    pub cluster: Option<ClusterConfig>,
    /// `[bots.<name>]`: bot levels by name, in the file's order.
    pub bots: IndexMap<String, BotConfig>,
}

impl Config {
    /// Reads and validates a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Config::from_toml(&text)
    }

    /// Parses and validates TOML text.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        Config::try_from(raw)
    }
}

impl Default for Config {
    /// The defaults, with the shipped bot levels.
    fn default() -> Self {
        Config::try_from(RawConfig::default()).expect("the defaults are valid")
    }
}

impl TryFrom<RawConfig> for Config {
    type Error = ConfigError;

    /// Checks every section, in the order store, server, limits, rooms, chat, search, bots; the first
    /// invalid key is the error.
    fn try_from(raw: RawConfig) -> Result<Config, ConfigError> {
        let RawConfig {
            server,
            limits,
            rooms,
            chat,
            search,
            store,
            analysis,
            ratings,
            cluster,
            bots,
        } = raw;
        let store: StoreConfig = store.try_into()?;
        let cluster = match cluster {
            None => None,
            Some(_) if store.url.is_none() => {
                return Err(invalid(
                    "cluster",
                    "needs [store] url: the nodes of a cluster share one PostgreSQL database",
                ))
            }
            Some(c) => Some(ClusterConfig::try_from(c)?),
        };
        Ok(Config {
            server: server.try_into()?,
            limits: limits.try_into()?,
            rooms: rooms.try_into()?,
            chat: chat.try_into()?,
            search: search.try_into()?,
            store,
            analysis: analysis.try_into()?,
            ratings: ratings.try_into()?,
            cluster,
            bots: bots::levels(bots)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_config_toml_is_valid_and_has_the_levels() {
        let text = include_str!("../../config.toml");
        let c = Config::from_toml(text).unwrap();
        let names: Vec<&str> = c.bots.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["beginner", "casual", "club", "strong", "expert", "master", "classic"],
            "the file's order: weakest first"
        );
        assert_eq!(
            Config::default().bots.keys().collect::<Vec<_>>(),
            c.bots.keys().collect::<Vec<_>>(),
            "without [bots.*] tables the server ships the same levels"
        );
        assert_eq!(c.limits.max_frame_bytes, 4096);
        assert_eq!(c.rooms.grace, Duration::from_secs(60));
        assert_eq!(c.store.path, "data/caro-arena.db");
    }

    #[test]
    fn the_commented_outside_engine_example_in_config_toml_is_valid() {
        let text = include_str!("../../config.toml");
        let start = text.find("# [bots.pbrain]").expect("the example");
        let example: Vec<&str> = text[start..]
            .lines()
            .take_while(|l| l.starts_with("# "))
            .map(|l| &l[2..])
            // The example's program need not be built here.
            .map(|l| {
                if l.starts_with("command") {
                    "command = \"sh\""
                } else {
                    l
                }
            })
            .collect();
        let c = Config::from_toml(&example.join("\n")).unwrap();
        let BotEngine::Outside(o) = &c.bots["pbrain"].engine else {
            panic!("not an outside engine")
        };
        assert_eq!(o.rules.len(), 4);
        assert!(o.rectangular);
    }

    #[test]
    fn store_path_defaults_under_data_and_must_not_be_empty() {
        assert_eq!(Config::default().store.path, "data/caro-arena.db");
        let c = Config::from_toml("[store]\npath = \":memory:\"\n").unwrap();
        assert_eq!(c.store.path, ":memory:");
        let e = Config::from_toml("[store]\npath = \" \"\n").unwrap_err();
        assert!(
            e.to_string().starts_with("store.path: must not be empty"),
            "{e}"
        );
    }

    #[test]
    fn the_other_config_files_in_the_repository_load() {
        // The load tests spawn the server with this file (docs/performance.md).
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/loadgen/load.toml");
        let load = Config::load(Path::new(path)).unwrap();
        assert_eq!(load.limits.max_rooms, 100_000);
        assert_eq!(load.store.path, ":memory:");
        assert_eq!(load.server.bind.port(), 0);
        assert_eq!(
            load.bots.keys().collect::<Vec<_>>(),
            Config::default().bots.keys().collect::<Vec<_>>(),
            "the load tests play the shipped levels"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::from_toml("[limits]\nmax_frame_bytes = 10\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "limits.max_frame_bytes: must be at least 256"
        );
        let e = Config::from_toml("[server]\nbindd = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("bindd"), "{e}");
        let e = Config::from_toml(
            "[bots.x]\ndescription=\"\"\ngames=[\"chess\"]\nmax_depth=1\ntime_ms=5\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("bots.x.games:"), "{e}");
        let e = Config::from_toml("[ratings]\nmin_games = 0\n").unwrap_err();
        assert_eq!(e.to_string(), "ratings.min_games: must be at least 1");
        let e = Config::from_toml(
            "[bots.x]\ndescription=\"\"\ngames=[\"caro\"]\nmax_depth=1\ntime_ms=5\nrating=50\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "bots.x.rating: must be 100..=4000");
    }

    /// The shipped levels' ratings are the ladder of docs/strength.md anchored at
    /// beginner = 1200 (docs/ratings.md): a change to either is a change to both docs.
    #[test]
    fn the_shipped_bot_ratings_are_the_anchored_ladder() {
        let c = Config::default();
        let ratings: Vec<(&str, Option<f64>)> = c
            .bots
            .iter()
            .map(|(name, b)| (name.as_str(), b.rating))
            .collect();
        assert_eq!(
            ratings,
            [
                ("beginner", Some(1200.0)),
                ("casual", Some(1388.0)),
                ("club", Some(1619.0)),
                ("strong", Some(1808.0)),
                ("expert", Some(2074.0)),
                ("master", Some(2311.0)),
                ("classic", Some(1076.0)),
            ]
        );
        assert_eq!(c.ratings.min_games, 5);
    }
}
