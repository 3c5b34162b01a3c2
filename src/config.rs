//! Operator settings: `config.toml` is read into [`RawConfig`] (serde, defaults, unknown keys are
//! errors), then validated once into [`Config`], the typed settings the server uses. Every
//! validation error names its key (`limits.max_frame_bytes: must be at least 256`), so an invalid
//! file fails at start with a message the operator can act on.
//!
//! Nothing here is read again after start-up.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use caro_engine::bot::{Level, Style};
use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use caro_engine::GameKind;
use serde::Deserialize;

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
    /// `[search]`
    pub search: RawSearch,
    /// `[store]`
    pub store: RawStore,
    /// `[bots.<name>]`
    pub bots: Option<BTreeMap<String, RawBot>>,
}

/// `[store]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawStore {
    /// SQLite file, or `:memory:` for no persistence.
    pub path: String,
}

impl Default for RawStore {
    fn default() -> RawStore {
        RawStore {
            path: "data/caro-arena.db".into(),
        }
    }
}

/// `[server]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawServer {
    /// Listen address.
    pub bind: String,
    /// tracing filter.
    pub log: String,
    /// How long shutdown waits for tasks.
    pub shutdown_timeout_ms: u64,
    /// WebSocket ping interval.
    pub heartbeat_ms: u64,
    /// A connection silent this long is dead.
    pub idle_timeout_ms: u64,
    /// Time allowed to send `hello` / the HTTP request head.
    pub handshake_timeout_ms: u64,
    /// Tokens of sessions without a connection or a seat are forgotten after this.
    pub session_ttl_ms: u64,
    /// Serve the browser client from this directory instead of the embedded copy ("": embedded).
    pub client_dir: String,
}

impl Default for RawServer {
    fn default() -> Self {
        RawServer {
            bind: "127.0.0.1:8080".into(),
            log: "info".into(),
            shutdown_timeout_ms: 10_000,
            heartbeat_ms: 15_000,
            idle_timeout_ms: 45_000,
            handshake_timeout_ms: 10_000,
            session_ttl_ms: 3_600_000,
            client_dir: String::new(),
        }
    }
}

/// `[limits]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawLimits {
    /// Largest WebSocket frame / message accepted.
    pub max_frame_bytes: usize,
    /// Simultaneous connections (WebSocket and HTTP).
    pub max_connections: usize,
    /// Open rooms.
    pub max_rooms: usize,
    /// Spectators per room.
    pub max_spectators: usize,
    /// Longest player name, in characters.
    pub max_name_chars: usize,
    /// Smallest Caro board side.
    pub min_board: u8,
    /// Largest Caro board side.
    pub max_board: u8,
    /// Token bucket refill, messages per second.
    pub rate_per_sec: f64,
    /// Token bucket size.
    pub rate_burst: u32,
    /// Messages refused in a row before the connection is closed with 1008.
    pub flood_close_after: u32,
    /// Outgoing messages queued per connection before it counts as too slow and is dropped.
    pub send_queue: usize,
}

impl Default for RawLimits {
    fn default() -> Self {
        RawLimits {
            max_frame_bytes: 4096,
            max_connections: 10_000,
            max_rooms: 2_000,
            max_spectators: 500,
            max_name_chars: 24,
            min_board: 5,
            max_board: 32,
            rate_per_sec: 10.0,
            rate_burst: 30,
            flood_close_after: 50,
            send_queue: 512,
        }
    }
}

/// `[rooms]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawRooms {
    /// Abandonment clock of an absent player, running while it is their turn.
    pub grace_ms: u64,
    /// An absent player loses after this long away, whoever's turn it is.
    pub absent_cap_ms: u64,
    /// Finished rooms stay watchable this long.
    pub finished_ttl_ms: u64,
    /// Rooms with nobody connected close after this long.
    pub empty_ttl_ms: u64,
    /// Spectator-count updates are sent at most this often per room.
    pub crowd_update_ms: u64,
    /// Record events kept per room for `sync`.
    pub history_events: usize,
}

impl Default for RawRooms {
    fn default() -> Self {
        RawRooms {
            grace_ms: 60_000,
            absent_cap_ms: 300_000,
            finished_ttl_ms: 600_000,
            empty_ttl_ms: 120_000,
            crowd_update_ms: 1_000,
            history_events: 4_096,
        }
    }
}

/// `[search]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawSearch {
    /// Searches running at once, server-wide.
    pub max_concurrent: usize,
    /// `bot_thinking` at most this often per search.
    pub thinking_interval_ms: u64,
    /// A bot never answers faster than this (so bot games can be watched).
    pub min_move_ms: u64,
}

impl Default for RawSearch {
    fn default() -> Self {
        RawSearch {
            max_concurrent: 2,
            thinking_interval_ms: 250,
            min_move_ms: 300,
        }
    }
}

/// `[bots.<name>]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBot {
    /// Shown to players.
    pub description: String,
    /// `"caro"` and/or `"tictactoe"`.
    pub games: Vec<String>,
    /// `"full"` or `"classic"`.
    #[serde(default = "default_style")]
    pub style: String,
    /// Deepest iteration.
    pub max_depth: u8,
    /// Time per move.
    pub time_ms: u64,
    /// Blunder probability.
    #[serde(default)]
    pub blunder: f64,
}

fn default_style() -> String {
    "full".into()
}

/// A validated bot level.
#[derive(Debug, Clone)]
pub struct BotConfig {
    /// The key under `[bots]`.
    pub name: String,
    /// Shown to players.
    pub description: String,
    /// Games it plays.
    pub games: Vec<GameKind>,
    /// The engine's level.
    pub level: Level,
}

/// The validated configuration the server runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Listen address.
    pub bind: SocketAddr,
    /// tracing filter directive.
    pub log: String,
    /// How long shutdown waits for tasks.
    pub shutdown_timeout: Duration,
    /// WebSocket ping interval.
    pub heartbeat: Duration,
    /// Silence after which a connection is dead.
    pub idle_timeout: Duration,
    /// Time for the HTTP head and `hello`.
    pub handshake_timeout: Duration,
    /// Session token lifetime without connection or seat.
    pub session_ttl: Duration,
    /// Where the browser client is read from; `None`: the copy embedded in the binary.
    pub client_dir: Option<std::path::PathBuf>,
    /// Largest frame / message.
    pub max_frame_bytes: usize,
    /// Simultaneous connections.
    pub max_connections: usize,
    /// Open rooms.
    pub max_rooms: usize,
    /// Spectators per room.
    pub max_spectators: usize,
    /// Longest name.
    pub max_name_chars: usize,
    /// Smallest Caro board side.
    pub min_board: u8,
    /// Largest Caro board side.
    pub max_board: u8,
    /// Token bucket refill per second.
    pub rate_per_sec: f64,
    /// Token bucket size.
    pub rate_burst: u32,
    /// Refused messages in a row before closing with 1008.
    pub flood_close_after: u32,
    /// Per-connection outgoing queue.
    pub send_queue: usize,
    /// Abandonment clock.
    pub grace: Duration,
    /// Absence cap.
    pub absent_cap: Duration,
    /// Finished room lifetime.
    pub finished_ttl: Duration,
    /// Empty room lifetime.
    pub empty_ttl: Duration,
    /// Crowd update interval.
    pub crowd_update: Duration,
    /// Events kept for `sync`.
    pub history_events: usize,
    /// Concurrent searches.
    pub max_searches: usize,
    /// `bot_thinking` throttle.
    pub thinking_interval: Duration,
    /// Minimum bot move time.
    pub min_move: Duration,
    /// Bot levels by name, in name order.
    pub bots: BTreeMap<String, BotConfig>,
    /// The game database: a SQLite file path, or `:memory:` (no persistence, for tests).
    pub store_path: String,
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
        raw.validate()
    }
}

impl Default for Config {
    /// The defaults, with the shipped bot levels.
    fn default() -> Self {
        RawConfig::default()
            .validate()
            .expect("the defaults are valid")
    }
}

fn default_bots() -> BTreeMap<String, RawBot> {
    let bot = |description: &str, games: &[&str], style: &str, depth, ms, blunder| RawBot {
        description: description.into(),
        games: games.iter().map(|g| g.to_string()).collect(),
        style: style.into(),
        max_depth: depth,
        time_ms: ms,
        blunder,
    };
    let both = ["caro", "tictactoe"];
    BTreeMap::from([
        (
            "beginner".into(),
            bot("Learning the game", &both, "full", 2, 200, 0.35),
        ),
        (
            "casual".into(),
            bot("A relaxed club player", &both, "full", 4, 400, 0.12),
        ),
        (
            "strong".into(),
            bot("Plays to win", &both, "full", 8, 1000, 0.0),
        ),
        (
            "master".into(),
            bot("Our strongest search", &both, "full", 64, 2000, 0.0),
        ),
        (
            "classic".into(),
            bot("The original engine", &["caro"], "classic", 4, 3000, 0.0),
        ),
    ])
}

fn ms(key: &str, value: u64, min: u64) -> Result<Duration, ConfigError> {
    if value < min {
        return Err(invalid(key, format!("must be at least {min}")));
    }
    Ok(Duration::from_millis(value))
}

impl RawConfig {
    /// Checks every key and builds the typed [`Config`].
    pub fn validate(self) -> Result<Config, ConfigError> {
        let store_path = self.store.path;
        if store_path.trim().is_empty() {
            return Err(invalid(
                "store.path",
                "must not be empty (use \":memory:\" to run without persistence)",
            ));
        }
        let s = self.server;
        let bind = s.bind.parse::<SocketAddr>().map_err(|e| {
            invalid(
                "server.bind",
                format!("{e} (expected e.g. \"127.0.0.1:8080\")"),
            )
        })?;
        if s.log.trim().is_empty() {
            return Err(invalid("server.log", "must not be empty"));
        }
        tracing_subscriber::EnvFilter::try_new(&s.log)
            .map_err(|e| invalid("server.log", e.to_string()))?;
        let l = self.limits;
        if l.max_frame_bytes < 256 {
            return Err(invalid("limits.max_frame_bytes", "must be at least 256"));
        }
        if l.max_frame_bytes > 1 << 20 {
            return Err(invalid("limits.max_frame_bytes", "must be at most 1048576"));
        }
        for (key, v) in [
            ("limits.max_connections", l.max_connections),
            ("limits.max_rooms", l.max_rooms),
            ("limits.max_name_chars", l.max_name_chars),
            ("limits.send_queue", l.send_queue),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        if l.min_board < MIN_CARO_SIZE || l.min_board > MAX_SIZE {
            return Err(invalid(
                "limits.min_board",
                format!("must be in {MIN_CARO_SIZE}..={MAX_SIZE}"),
            ));
        }
        if l.max_board < l.min_board || l.max_board > MAX_SIZE {
            return Err(invalid(
                "limits.max_board",
                format!("must be in limits.min_board..={MAX_SIZE}"),
            ));
        }
        if !(l.rate_per_sec.is_finite() && l.rate_per_sec > 0.0) {
            return Err(invalid("limits.rate_per_sec", "must be a positive number"));
        }
        if l.rate_burst == 0 {
            return Err(invalid("limits.rate_burst", "must be at least 1"));
        }
        if l.flood_close_after == 0 {
            return Err(invalid("limits.flood_close_after", "must be at least 1"));
        }
        let r = self.rooms;
        if r.history_events == 0 {
            return Err(invalid("rooms.history_events", "must be at least 1"));
        }
        if r.absent_cap_ms < r.grace_ms {
            return Err(invalid(
                "rooms.absent_cap_ms",
                "must be at least rooms.grace_ms",
            ));
        }
        let q = self.search;
        if q.max_concurrent == 0 {
            return Err(invalid("search.max_concurrent", "must be at least 1"));
        }
        let mut bots = BTreeMap::new();
        for (name, b) in self.bots.unwrap_or_else(default_bots) {
            let key = |k: &str| format!("bots.{name}.{k}");
            if name.is_empty()
                || name.len() > 32
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(
                    format!("bots.{name}"),
                    "a level name is 1 to 32 of a-z, 0-9, '_' and '-'",
                ));
            }
            let style = match b.style.as_str() {
                "full" => Style::Full,
                "classic" => Style::Classic,
                other => {
                    return Err(invalid(
                        key("style"),
                        format!("unknown style {other:?} (expected \"full\" or \"classic\")"),
                    ))
                }
            };
            if b.max_depth == 0 {
                return Err(invalid(key("max_depth"), "must be at least 1"));
            }
            if b.time_ms == 0 || b.time_ms > 600_000 {
                return Err(invalid(key("time_ms"), "must be in 1..=600000"));
            }
            if !(0.0..=1.0).contains(&b.blunder) {
                return Err(invalid(key("blunder"), "must be in 0..=1"));
            }
            if b.games.is_empty() {
                return Err(invalid(key("games"), "must list at least one game"));
            }
            let mut games = Vec::new();
            for g in &b.games {
                let kind = g
                    .parse::<GameKind>()
                    .map_err(|e| invalid(key("games"), e.to_string()))?;
                if !games.contains(&kind) {
                    games.push(kind);
                }
            }
            bots.insert(
                name.clone(),
                BotConfig {
                    name,
                    description: b.description,
                    games,
                    level: Level {
                        style,
                        max_depth: b.max_depth,
                        time: Duration::from_millis(b.time_ms),
                        blunder: b.blunder,
                    },
                },
            );
        }
        Ok(Config {
            bind,
            log: s.log,
            shutdown_timeout: ms("server.shutdown_timeout_ms", s.shutdown_timeout_ms, 0)?,
            heartbeat: ms("server.heartbeat_ms", s.heartbeat_ms, 10)?,
            idle_timeout: ms("server.idle_timeout_ms", s.idle_timeout_ms, 20)?,
            handshake_timeout: ms("server.handshake_timeout_ms", s.handshake_timeout_ms, 10)?,
            session_ttl: ms("server.session_ttl_ms", s.session_ttl_ms, 0)?,
            client_dir: match s.client_dir.as_str() {
                "" => None,
                dir if std::path::Path::new(dir).join("index.html").is_file() => Some(dir.into()),
                _ => {
                    return Err(invalid(
                        "server.client_dir",
                        "must be a directory holding index.html (or \"\" for the embedded client)",
                    ))
                }
            },
            max_frame_bytes: l.max_frame_bytes,
            max_connections: l.max_connections,
            max_rooms: l.max_rooms,
            max_spectators: l.max_spectators,
            max_name_chars: l.max_name_chars,
            min_board: l.min_board,
            max_board: l.max_board,
            rate_per_sec: l.rate_per_sec,
            rate_burst: l.rate_burst,
            flood_close_after: l.flood_close_after,
            send_queue: l.send_queue,
            grace: ms("rooms.grace_ms", r.grace_ms, 1)?,
            absent_cap: ms("rooms.absent_cap_ms", r.absent_cap_ms, 1)?,
            finished_ttl: ms("rooms.finished_ttl_ms", r.finished_ttl_ms, 0)?,
            empty_ttl: ms("rooms.empty_ttl_ms", r.empty_ttl_ms, 0)?,
            crowd_update: ms("rooms.crowd_update_ms", r.crowd_update_ms, 0)?,
            history_events: r.history_events,
            max_searches: q.max_concurrent,
            thinking_interval: ms("search.thinking_interval_ms", q.thinking_interval_ms, 0)?,
            min_move: ms("search.min_move_ms", q.min_move_ms, 0)?,
            bots,
            store_path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_config_toml_is_valid_and_has_the_levels() {
        let text = include_str!("../config.toml");
        let c = Config::from_toml(text).unwrap();
        for name in ["beginner", "casual", "strong", "master", "classic"] {
            assert!(c.bots.contains_key(name), "{name}");
        }
        assert_eq!(c.max_frame_bytes, 4096);
        assert_eq!(c.grace, Duration::from_secs(60));
        assert_eq!(c.store_path, "data/caro-arena.db");
    }

    #[test]
    fn store_path_defaults_under_data_and_must_not_be_empty() {
        assert_eq!(Config::default().store_path, "data/caro-arena.db");
        let c = Config::from_toml("[store]\npath = \":memory:\"\n").unwrap();
        assert_eq!(c.store_path, ":memory:");
        let e = Config::from_toml("[store]\npath = \" \"\n").unwrap_err();
        assert!(
            e.to_string().starts_with("store.path: must not be empty"),
            "{e}"
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
    }
}
