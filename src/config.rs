//! Operator settings: `config.toml` is read into [`RawConfig`] (serde, defaults, unknown keys are
//! errors), then validated once into [`Config`], the typed settings the server uses. Every
//! validation error names its key (`limits.max_frame_bytes: must be at least 256`), so an invalid
//! file fails at start with a message the operator can act on.
//!
//! Nothing here is read again after start-up.

use indexmap::IndexMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use caro_engine::bot::{Level, Style};
use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use caro_engine::{GameKind, Rule, Rules};
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
    pub bots: Option<IndexMap<String, RawBot>>,
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
    /// Lobby watchers get the rooms that changed at most this often.
    pub lobby_update_ms: u64,
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
            lobby_update_ms: 1_000,
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
    /// How much nicer than the server (in `nice` steps, 0..=19) search threads run.
    pub nice: u8,
    /// Searches of games between two bots may hold at most this many of the `max_concurrent`
    /// slots (default: all but one).
    pub bot_vs_bot_slots: Option<usize>,
}

impl Default for RawSearch {
    fn default() -> Self {
        RawSearch {
            max_concurrent: 2,
            thinking_interval_ms: 250,
            min_move_ms: 300,
            nice: 10,
            bot_vs_bot_slots: None,
        }
    }
}

/// `[search]`, validated: how built-in bots search.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    /// Concurrent searches, server-wide (built-in and outside engines).
    pub max_concurrent: usize,
    /// `bot_thinking` throttle.
    pub thinking_interval: Duration,
    /// Minimum bot move time.
    pub min_move: Duration,
    /// Niceness added to search threads, so players' messages win the CPU from searches.
    pub nice: u8,
    /// Slots that searches of bot-vs-bot games may hold at once (< `max_concurrent` when it is
    /// above 1, so games with a human always find one).
    pub bot_vs_bot_slots: usize,
}

/// `[bots.<name>]`: a built-in level (`style`, `max_depth`, `time_ms`, `blunder`) or, with
/// `command`, an outside Gomocup engine (`command`, `args`, `working_dir`, `time_ms`, ...).
/// Which keys belong to which kind is checked in [`RawConfig::validate`].
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawBot {
    /// Shown to players.
    pub description: String,
    /// `"caro"` and/or `"tictactoe"` (required for built-in levels; outside engines: `"caro"`).
    pub games: Option<Vec<String>>,
    /// `"full"` (default) or `"classic"`. Built-in only.
    pub style: Option<String>,
    /// Deepest iteration. Built-in only, required there.
    pub max_depth: Option<u8>,
    /// Time per move (`INFO timeout_turn` for an outside engine). Required.
    pub time_ms: Option<u64>,
    /// Blunder probability. Built-in only.
    pub blunder: Option<f64>,
    /// The outside engine's program: a path, or a bare name looked up on `PATH`.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Option<Vec<String>>,
    /// Its working directory (default: the server's).
    pub working_dir: Option<String>,
    /// `INFO timeout_match` per game; 0 or absent = no match clock.
    pub match_time_ms: Option<u64>,
    /// Extra time an answer may take beyond its limit before it forfeits.
    pub margin_ms: Option<u64>,
    /// Time to start the process and answer `START`.
    pub start_timeout_ms: Option<u64>,
    /// `INFO max_memory`, in MiB.
    pub max_memory_mb: Option<u64>,
    /// Rule variants the engine plays.
    pub rules: Option<Vec<String>>,
    /// Smallest board side it plays.
    pub min_board: Option<u8>,
    /// Largest board side it plays.
    pub max_board: Option<u8>,
    /// Whether it accepts `RECTSTART` (boards that are not square).
    pub rectangular: Option<bool>,
    /// Processes of this engine at most, each thinking about one position at a time.
    pub max_processes: Option<usize>,
}

/// A validated outside engine: a Gomocup (Piskvork protocol 2) program the server runs as a
/// bot. See docs/bots.md.
#[derive(Debug, Clone, PartialEq)]
pub struct OutsideConfig {
    /// The program, as an absolute path (resolved at start, `PATH` included).
    pub program: PathBuf,
    /// Its arguments, passed as they are.
    pub args: Vec<String>,
    /// Its working directory (absolute); `None`: the server's.
    pub working_dir: Option<PathBuf>,
    /// Time per move, sent as `INFO timeout_turn`.
    pub turn_time: Duration,
    /// Time per game, sent as `INFO timeout_match` (with `INFO time_left` before each move).
    pub match_time: Option<Duration>,
    /// An answer later than its limit plus this forfeits.
    pub margin: Duration,
    /// Time for a new process to answer its first `START`.
    pub start_timeout: Duration,
    /// `INFO max_memory`, bytes.
    pub max_memory: Option<u64>,
    /// Rule variants it plays.
    pub rules: Vec<Rule>,
    /// Smallest board side.
    pub min_board: u8,
    /// Largest board side.
    pub max_board: u8,
    /// Whether boards need not be square.
    pub rectangular: bool,
    /// Processes at most.
    pub max_processes: usize,
}

/// What plays for a bot level.
#[derive(Debug, Clone)]
pub enum BotEngine {
    /// Our engine at this level.
    Builtin(Level),
    /// An outside Gomocup engine.
    Outside(Arc<OutsideConfig>),
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
    /// Who plays.
    pub engine: BotEngine,
}

impl BotConfig {
    /// Whether this level plays a game with these rules; the error says why not, for players.
    pub fn plays(&self, rules: &Rules) -> Result<(), String> {
        let kind = rules.kind();
        if !self.games.contains(&kind) {
            return Err(format!("does not play {kind}"));
        }
        let BotEngine::Outside(o) = &self.engine else {
            return Ok(());
        };
        if !o.rules.contains(&rules.rule()) {
            let names: Vec<&str> = o.rules.iter().map(|r| r.as_str()).collect();
            return Err(format!(
                "does not play the {} rule (only {})",
                rules.rule(),
                names.join(", ")
            ));
        }
        let (w, h) = (rules.width(), rules.height());
        let sizes =
            (o.min_board..=o.max_board).contains(&w) && (o.min_board..=o.max_board).contains(&h);
        if !sizes || (w != h && !o.rectangular) {
            let shape = if o.rectangular { "" } else { ", square" };
            return Err(format!(
                "does not play on {w}x{h} (only {min}x{min} to {max}x{max}{shape})",
                min = o.min_board,
                max = o.max_board
            ));
        }
        Ok(())
    }
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
    /// Lobby feed interval.
    pub lobby_update: Duration,
    /// Bot searches: concurrency, progress throttle, minimum move time, priority.
    pub search: SearchConfig,
    /// Bot levels by name, in name order.
    pub bots: IndexMap<String, BotConfig>,
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

/// The shipped levels: the `[bots.*]` tables of the repository's `config.toml`, compiled in, so
/// that a config without any of them and the shipped file offer the same bots (measured in
/// `docs/strength.md`).
fn default_bots() -> IndexMap<String, RawBot> {
    let shipped: RawConfig =
        toml::from_str(include_str!("../config.toml")).expect("the shipped config.toml parses");
    shipped
        .bots
        .expect("the shipped config.toml has [bots.*] tables")
}

fn ms(key: &str, value: u64, min: u64) -> Result<Duration, ConfigError> {
    if value < min {
        return Err(invalid(key, format!("must be at least {min}")));
    }
    Ok(Duration::from_millis(value))
}

/// Checks one `[bots.<name>]` table: a built-in level, or an outside engine when it has
/// `command`.
fn validate_bot(name: String, b: RawBot) -> Result<BotConfig, ConfigError> {
    let key = |k: &str| format!("bots.{name}.{k}");
    let outside = b.command.is_some();
    let time_ms = b
        .time_ms
        .ok_or_else(|| invalid(key("time_ms"), "is required"))?;
    if time_ms == 0 || time_ms > 600_000 {
        return Err(invalid(key("time_ms"), "must be in 1..=600000"));
    }
    let games = match (&b.games, outside) {
        (None, false) => return Err(invalid(key("games"), "is required")),
        (None, true) => vec![GameKind::Caro],
        (Some(list), _) => {
            if list.is_empty() {
                return Err(invalid(key("games"), "must list at least one game"));
            }
            let mut games = Vec::new();
            for g in list {
                let kind = g
                    .parse::<GameKind>()
                    .map_err(|e| invalid(key("games"), e.to_string()))?;
                if !games.contains(&kind) {
                    games.push(kind);
                }
            }
            games
        }
    };
    let engine = if outside {
        for (k, set) in [
            ("style", b.style.is_some()),
            ("max_depth", b.max_depth.is_some()),
            ("blunder", b.blunder.is_some()),
        ] {
            if set {
                return Err(invalid(
                    key(k),
                    "belongs to built-in levels; this level is an outside engine (it has command)",
                ));
            }
        }
        if games != [GameKind::Caro] {
            return Err(invalid(
                key("games"),
                "an outside Gomocup engine plays only \"caro\" (the protocol has no tic-tac-toe)",
            ));
        }
        BotEngine::Outside(Arc::new(validate_outside(&key, &b, time_ms)?))
    } else {
        for (k, set) in [
            ("args", b.args.is_some()),
            ("working_dir", b.working_dir.is_some()),
            ("match_time_ms", b.match_time_ms.is_some()),
            ("margin_ms", b.margin_ms.is_some()),
            ("start_timeout_ms", b.start_timeout_ms.is_some()),
            ("max_memory_mb", b.max_memory_mb.is_some()),
            ("rules", b.rules.is_some()),
            ("min_board", b.min_board.is_some()),
            ("max_board", b.max_board.is_some()),
            ("rectangular", b.rectangular.is_some()),
            ("max_processes", b.max_processes.is_some()),
        ] {
            if set {
                return Err(invalid(
                    key(k),
                    "is for outside engines only (a level with command)",
                ));
            }
        }
        let style = match b.style.as_deref().unwrap_or("full") {
            "full" => Style::Full,
            "classic" => Style::Classic,
            other => {
                return Err(invalid(
                    key("style"),
                    format!("unknown style {other:?} (expected \"full\" or \"classic\")"),
                ))
            }
        };
        let max_depth = b.max_depth.ok_or_else(|| {
            invalid(
                key("max_depth"),
                "is required (or set command for an outside engine)",
            )
        })?;
        if max_depth == 0 {
            return Err(invalid(key("max_depth"), "must be at least 1"));
        }
        let blunder = b.blunder.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&blunder) {
            return Err(invalid(key("blunder"), "must be in 0..=1"));
        }
        BotEngine::Builtin(Level {
            style,
            max_depth,
            time: Duration::from_millis(time_ms),
            blunder,
        })
    };
    Ok(BotConfig {
        name,
        description: b.description,
        games,
        engine,
    })
}

/// The outside-engine keys of a level.
fn validate_outside(
    key: &dyn Fn(&str) -> String,
    b: &RawBot,
    time_ms: u64,
) -> Result<OutsideConfig, ConfigError> {
    let here = std::env::current_dir().map_err(|e| {
        invalid(
            key("command"),
            format!("cannot read the working directory: {e}"),
        )
    })?;
    let command = b.command.as_deref().unwrap_or_default();
    let program = resolve_program(command, &here).map_err(|m| invalid(key("command"), m))?;
    let working_dir = match &b.working_dir {
        None => None,
        Some(d) => {
            let dir = here.join(d);
            if !dir.is_dir() {
                return Err(invalid(
                    key("working_dir"),
                    format!("{} is not a directory", dir.display()),
                ));
            }
            Some(dir)
        }
    };
    let match_time = match b.match_time_ms.unwrap_or(0) {
        0 => None,
        ms if ms > 86_400_000 => {
            return Err(invalid(key("match_time_ms"), "must be in 0..=86400000"))
        }
        ms => Some(Duration::from_millis(ms)),
    };
    let margin_ms = b.margin_ms.unwrap_or(500);
    if margin_ms > 60_000 {
        return Err(invalid(key("margin_ms"), "must be in 0..=60000"));
    }
    let start_ms = b.start_timeout_ms.unwrap_or(10_000);
    if start_ms == 0 || start_ms > 600_000 {
        return Err(invalid(key("start_timeout_ms"), "must be in 1..=600000"));
    }
    let max_memory = match b.max_memory_mb {
        None => None,
        Some(mb) if mb == 0 || mb > 1 << 20 => {
            return Err(invalid(key("max_memory_mb"), "must be in 1..=1048576"))
        }
        Some(mb) => Some(mb << 20),
    };
    let mut rules = Vec::new();
    for r in b.rules.clone().unwrap_or_else(|| vec!["freestyle".into()]) {
        let rule = r
            .parse::<Rule>()
            .map_err(|e| invalid(key("rules"), e.to_string()))?;
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    if rules.is_empty() {
        return Err(invalid(key("rules"), "must list at least one rule"));
    }
    let min_board = b.min_board.unwrap_or(15);
    if !(MIN_CARO_SIZE..=MAX_SIZE).contains(&min_board) {
        return Err(invalid(
            key("min_board"),
            format!("must be in {MIN_CARO_SIZE}..={MAX_SIZE}"),
        ));
    }
    let max_board = b.max_board.unwrap_or(20.max(min_board));
    if !(min_board..=MAX_SIZE).contains(&max_board) {
        return Err(invalid(
            key("max_board"),
            format!("must be in min_board..={MAX_SIZE}"),
        ));
    }
    let max_processes = b.max_processes.unwrap_or(1);
    if max_processes == 0 || max_processes > 64 {
        return Err(invalid(key("max_processes"), "must be in 1..=64"));
    }
    Ok(OutsideConfig {
        program,
        args: b.args.clone().unwrap_or_default(),
        working_dir,
        turn_time: Duration::from_millis(time_ms),
        match_time,
        margin: Duration::from_millis(margin_ms),
        start_timeout: Duration::from_millis(start_ms),
        max_memory,
        rules,
        min_board,
        max_board,
        rectangular: b.rectangular.unwrap_or(false),
        max_processes,
    })
}

/// The program an outside engine's `command` names, as an absolute path: a path with a `/` is
/// taken relative to `here` (the server's working directory), a bare name is looked up on
/// `PATH`, as a shell would. It must be an executable file.
fn resolve_program(command: &str, here: &Path) -> Result<PathBuf, String> {
    if command.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if !command.contains(std::path::MAIN_SEPARATOR) && !command.contains('/') {
        let path = std::env::var_os("PATH").unwrap_or_default();
        return std::env::split_paths(&path)
            .map(|dir| here.join(dir).join(command))
            .find(|p| check_executable(p).is_ok())
            .ok_or_else(|| format!("{command:?} is not an executable found on PATH"));
    }
    let program = here.join(command);
    check_executable(&program)?;
    Ok(program)
}

fn check_executable(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(format!(
                "{} is not executable (chmod +x it, or make its interpreter the command and \
                 the script the first of args)",
                path.display()
            ));
        }
    }
    Ok(())
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
        if q.nice > 19 {
            return Err(invalid("search.nice", "must be 0..=19"));
        }
        if q.max_concurrent == 0 {
            return Err(invalid("search.max_concurrent", "must be at least 1"));
        }
        let mut bots = IndexMap::new();
        for (name, b) in self.bots.unwrap_or_else(default_bots) {
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
            let bot = validate_bot(name.clone(), b)?;
            bots.insert(name, bot);
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
            lobby_update: ms("rooms.lobby_update_ms", r.lobby_update_ms, 10)?,
            history_events: r.history_events,
            search: SearchConfig {
                max_concurrent: q.max_concurrent,
                thinking_interval: ms("search.thinking_interval_ms", q.thinking_interval_ms, 0)?,
                min_move: ms("search.min_move_ms", q.min_move_ms, 0)?,
                nice: q.nice,
                bot_vs_bot_slots: match q.bot_vs_bot_slots {
                    None => q.max_concurrent.saturating_sub(1).max(1),
                    Some(n) if (1..=q.max_concurrent).contains(&n) => n,
                    Some(_) => {
                        return Err(invalid(
                            "search.bot_vs_bot_slots",
                            "must be 1..=search.max_concurrent",
                        ))
                    }
                },
            },
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
        let names: Vec<&str> = c.bots.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["beginner", "casual", "club", "strong", "master", "classic"],
            "the file's order: weakest first"
        );
        assert_eq!(
            Config::default().bots.keys().collect::<Vec<_>>(),
            c.bots.keys().collect::<Vec<_>>(),
            "without [bots.*] tables the server ships the same levels"
        );
        assert_eq!(c.max_frame_bytes, 4096);
        assert_eq!(c.grace, Duration::from_secs(60));
        assert_eq!(c.store_path, "data/caro-arena.db");
    }

    #[test]
    fn the_commented_outside_engine_example_in_config_toml_is_valid() {
        let text = include_str!("../config.toml");
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
        assert_eq!(Config::default().store_path, "data/caro-arena.db");
        let c = Config::from_toml("[store]\npath = \":memory:\"\n").unwrap();
        assert_eq!(c.store_path, ":memory:");
        let e = Config::from_toml("[store]\npath = \" \"\n").unwrap_err();
        assert!(
            e.to_string().starts_with("store.path: must not be empty"),
            "{e}"
        );
    }

    fn outside(keys: &str) -> Result<Config, ConfigError> {
        Config::from_toml(&format!(
            "[bots.ext]\ndescription = \"x\"\ntime_ms = 500\n{keys}\n"
        ))
    }

    fn outside_err(keys: &str) -> String {
        outside(keys).unwrap_err().to_string()
    }

    #[test]
    fn an_outside_engine_level_has_defaults_and_a_resolved_program() {
        let c = outside("command = \"sh\"").unwrap();
        let b = &c.bots["ext"];
        assert_eq!(b.games, [GameKind::Caro]);
        let BotEngine::Outside(o) = &b.engine else {
            panic!("not outside: {b:?}")
        };
        assert!(
            o.program.is_absolute() && o.program.ends_with("sh"),
            "{o:?}"
        );
        assert_eq!(o.args, Vec::<String>::new());
        assert_eq!(o.working_dir, None);
        assert_eq!(o.turn_time, Duration::from_millis(500));
        assert_eq!(o.match_time, None);
        assert_eq!(o.margin, Duration::from_millis(500));
        assert_eq!(o.start_timeout, Duration::from_secs(10));
        assert_eq!(o.max_memory, None);
        assert_eq!(o.rules, [Rule::Freestyle]);
        assert_eq!((o.min_board, o.max_board, o.rectangular), (15, 20, false));
        assert_eq!(o.max_processes, 1);
        let c = outside(
            "command = \"/bin/sh\"\nargs = [\"-c\", \"x\"]\nworking_dir = \"/\"\n\
             match_time_ms = 60000\nmax_memory_mb = 2\nrules = [\"caro\", \"freestyle\"]\n\
             min_board = 9\nmax_board = 9\nrectangular = true\nmax_processes = 3",
        )
        .unwrap();
        let BotEngine::Outside(o) = &c.bots["ext"].engine else {
            panic!()
        };
        assert_eq!(o.program, PathBuf::from("/bin/sh"));
        assert_eq!(o.args, ["-c", "x"]);
        assert_eq!(o.working_dir, Some(PathBuf::from("/")));
        assert_eq!(o.match_time, Some(Duration::from_secs(60)));
        assert_eq!(o.max_memory, Some(2 << 20));
        assert_eq!(o.rules, [Rule::Caro, Rule::Freestyle]);
        assert_eq!((o.min_board, o.max_board, o.rectangular), (9, 9, true));
        assert_eq!(o.max_processes, 3);
    }

    #[test]
    fn outside_engine_errors_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("engine.py");
        std::fs::write(&script, "print('hi')\n").unwrap();
        let d = dir.path().display();
        let cases = [
            (
                format!("command = \"{d}/nope\""),
                format!("bots.ext.command: {d}/nope: No such file or directory (os error 2)"),
            ),
            (
                format!("command = \"{d}/engine.py\""),
                format!(
                    "bots.ext.command: {d}/engine.py is not executable (chmod +x it, or make \
                     its interpreter the command and the script the first of args)"
                ),
            ),
            (
                format!("command = \"{d}\""),
                format!("bots.ext.command: {d} is a directory"),
            ),
            (
                "command = \"no-such-engine-anywhere\"".into(),
                "bots.ext.command: \"no-such-engine-anywhere\" is not an executable found on PATH"
                    .into(),
            ),
            (
                "command = \"\"".into(),
                "bots.ext.command: must not be empty".into(),
            ),
            (
                format!("command = \"sh\"\nworking_dir = \"{d}/nope\""),
                format!("bots.ext.working_dir: {d}/nope is not a directory"),
            ),
            (
                "command = \"sh\"\nrules = [\"renju\"]".into(),
                "bots.ext.rules: unknown rule \"renju\" (expected freestyle, exact_five, caro \
                 or caro_overline)"
                    .into(),
            ),
            (
                "command = \"sh\"\nrules = []".into(),
                "bots.ext.rules: must list at least one rule".into(),
            ),
            (
                "command = \"sh\"\ngames = [\"caro\", \"tictactoe\"]".into(),
                "bots.ext.games: an outside Gomocup engine plays only \"caro\" (the protocol \
                 has no tic-tac-toe)"
                    .into(),
            ),
            (
                "command = \"sh\"\nmax_depth = 3".into(),
                "bots.ext.max_depth: belongs to built-in levels; this level is an outside \
                 engine (it has command)"
                    .into(),
            ),
            (
                "command = \"sh\"\nmin_board = 4".into(),
                "bots.ext.min_board: must be in 5..=32".into(),
            ),
            (
                "command = \"sh\"\nmin_board = 16\nmax_board = 15".into(),
                "bots.ext.max_board: must be in min_board..=32".into(),
            ),
            (
                "command = \"sh\"\nmax_processes = 0".into(),
                "bots.ext.max_processes: must be in 1..=64".into(),
            ),
            (
                "command = \"sh\"\nmargin_ms = 60001".into(),
                "bots.ext.margin_ms: must be in 0..=60000".into(),
            ),
            (
                "command = \"sh\"\nmax_memory_mb = 0".into(),
                "bots.ext.max_memory_mb: must be in 1..=1048576".into(),
            ),
            (
                "args = [\"x\"]\nmax_depth = 2\ngames = [\"caro\"]".into(),
                "bots.ext.args: is for outside engines only (a level with command)".into(),
            ),
            (
                "games = [\"caro\"]".into(),
                "bots.ext.max_depth: is required (or set command for an outside engine)".into(),
            ),
        ];
        for (keys, expected) in cases {
            assert_eq!(outside_err(&keys), expected, "{keys}");
        }
        let e =
            Config::from_toml("[bots.ext]\ndescription = \"x\"\ncommand = \"sh\"\n").unwrap_err();
        assert_eq!(e.to_string(), "bots.ext.time_ms: is required");
    }

    #[test]
    fn what_an_outside_engine_plays_is_checked_per_game() {
        let c =
            outside("command = \"sh\"\nrules = [\"caro\"]\nmin_board = 9\nmax_board = 15").unwrap();
        let b = &c.bots["ext"];
        assert_eq!(b.plays(&Rules::caro(15, 15, Rule::Caro).unwrap()), Ok(()));
        assert_eq!(
            b.plays(&Rules::caro(15, 15, Rule::Freestyle).unwrap()),
            Err("does not play the freestyle rule (only caro)".into())
        );
        assert_eq!(
            b.plays(&Rules::caro(9, 11, Rule::Caro).unwrap()),
            Err("does not play on 9x11 (only 9x9 to 15x15, square)".into())
        );
        assert_eq!(
            b.plays(&Rules::tictactoe()),
            Err("does not play tictactoe".into())
        );
        // Built-in levels play every rule and size of their games.
        let d = Config::default();
        assert_eq!(
            d.bots["strong"].plays(&Rules::caro(32, 5, Rule::CaroOverline).unwrap()),
            Ok(())
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
