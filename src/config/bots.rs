//! `[search]` and `[bots.<name>]`: how bots search, and the levels players may ask for, each
//! either our engine at some strength or an outside Gomocup engine ([`OutsideConfig`]).
//!
//! Validation only: nothing here starts a search or a process (that is `crate::bot` and
//! `crate::outside`). The one thing checked on disk is that an outside engine's program exists
//! and is executable, so a typo fails at start rather than at the first bot game.

mod outside;

use std::sync::Arc;
use std::time::Duration;

use caro_engine::bot::{self, Level, Style};
use caro_engine::search::negamax::MAX_THREADS;
use caro_engine::search::params::SearchParams;
use caro_engine::{GameKind, Rules};
use indexmap::IndexMap;
use serde::Deserialize;

use super::{invalid, ms, ConfigError, RawConfig};
pub use outside::OutsideConfig;

/// `[search]` as written.
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
    /// One player's searches may hold at most this many of the `max_concurrent` slots
    /// (default: all but one), so another player's bot finds a slot free.
    pub slots_per_player: Option<usize>,
    /// Threads (Lazy SMP) of a post-game analysis's or a bot-vs-bot game's search when no other
    /// search holds or waits for a slot; 1: one thread always.
    pub idle_threads: usize,
}

impl Default for RawSearch {
    fn default() -> Self {
        RawSearch {
            max_concurrent: 2,
            thinking_interval_ms: 250,
            min_move_ms: 300,
            nice: 10,
            bot_vs_bot_slots: None,
            slots_per_player: None,
            idle_threads: 1,
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
    /// Slots that one player's searches may hold at once (< `max_concurrent` when it is above
    /// 1, so a bystander's bot finds one free however many bot games a player runs).
    pub slots_per_player: usize,
    /// Search threads of a post-game analysis or a bot-vs-bot game's move when every other
    /// slot is free (1..=64; 1: off). See `crate::bot`.
    pub idle_threads: usize,
}

impl TryFrom<RawSearch> for SearchConfig {
    type Error = ConfigError;

    fn try_from(raw: RawSearch) -> Result<Self, ConfigError> {
        let RawSearch {
            max_concurrent,
            thinking_interval_ms,
            min_move_ms,
            nice,
            bot_vs_bot_slots,
            slots_per_player,
            idle_threads,
        } = raw;
        if nice > 19 {
            return Err(invalid("search.nice", "must be 0..=19"));
        }
        if max_concurrent == 0 {
            return Err(invalid("search.max_concurrent", "must be at least 1"));
        }
        if !(1..=MAX_THREADS).contains(&idle_threads) {
            return Err(invalid(
                "search.idle_threads",
                format!("must be 1..={MAX_THREADS}"),
            ));
        }
        let all_but_one = |key: &str, given: Option<usize>| match given {
            None => Ok(max_concurrent.saturating_sub(1).max(1)),
            Some(n) if (1..=max_concurrent).contains(&n) => Ok(n),
            Some(_) => Err(invalid(key, "must be 1..=search.max_concurrent")),
        };
        Ok(SearchConfig {
            max_concurrent,
            thinking_interval: ms("search.thinking_interval_ms", thinking_interval_ms, 0)?,
            min_move: ms("search.min_move_ms", min_move_ms, 0)?,
            nice,
            bot_vs_bot_slots: all_but_one("search.bot_vs_bot_slots", bot_vs_bot_slots)?,
            slots_per_player: all_but_one("search.slots_per_player", slots_per_player)?,
            idle_threads,
        })
    }
}

/// `[bots.<name>]` as written: a built-in level (`style`, `max_depth`, `time_ms`, `blunder`) or,
/// with `command`, an outside Gomocup engine (`command`, `args`, `working_dir`, `time_ms`, ...).
/// Which keys belong to which kind is checked in [`levels`].
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
    /// Whether the level searches with the engine's own numbers (quiet moves ordered by the
    /// learnt table) rather than with the levels' (`bot::level_params`: the cell values'
    /// order; default false). Built-in `full` levels only.
    pub learnt_ordering: Option<bool>,
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
    /// The level's fixed published rating (docs/ratings.md); absent: games against it are
    /// never rated.
    pub rating: Option<f64>,
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
    /// Its fixed published rating; `None`: games against it are never rated.
    pub rating: Option<f64>,
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

/// The `[bots.*]` tables, validated, in the file's order; none at all: the shipped levels.
pub fn levels(
    raw: Option<IndexMap<String, RawBot>>,
) -> Result<IndexMap<String, BotConfig>, ConfigError> {
    let mut bots = IndexMap::new();
    for (name, b) in raw.unwrap_or_else(default_levels) {
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
        let bot = level(name.clone(), b)?;
        bots.insert(name, bot);
    }
    Ok(bots)
}

/// The shipped levels: the `[bots.*]` tables of the repository's `config.toml`, compiled in, so
/// that a config without any of them and the shipped file offer the same bots (measured in
/// `docs/strength.md`).
fn default_levels() -> IndexMap<String, RawBot> {
    let shipped: RawConfig =
        toml::from_str(include_str!("../../config.toml")).expect("the shipped config.toml parses");
    shipped
        .bots
        .expect("the shipped config.toml has [bots.*] tables")
}

/// Checks one `[bots.<name>]` table: a built-in level, or an outside engine when it has
/// `command`.
fn level(name: String, b: RawBot) -> Result<BotConfig, ConfigError> {
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
            ("learnt_ordering", b.learnt_ordering.is_some()),
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
        BotEngine::Outside(Arc::new(OutsideConfig::from_raw(&key, &b, time_ms)?))
    } else {
        BotEngine::Builtin(builtin(&key, &b, time_ms)?)
    };
    if let Some(r) = b.rating {
        if !(100.0..=4000.0).contains(&r) {
            return Err(invalid(key("rating"), "must be 100..=4000"));
        }
    }
    Ok(BotConfig {
        rating: b.rating,
        name,
        description: b.description,
        games,
        engine,
    })
}

/// The built-in keys of a level, which must have no outside-engine key.
fn builtin(key: &dyn Fn(&str) -> String, b: &RawBot, time_ms: u64) -> Result<Level, ConfigError> {
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
    let search = match (b.learnt_ordering, style) {
        (Some(true), Style::Full) => SearchParams::default(),
        (Some(_), Style::Classic) => {
            return Err(invalid(
                key("learnt_ordering"),
                "belongs to the full search (style = \"full\"); the classic search has no ordering to learn",
            ))
        }
        (Some(false) | None, _) => bot::level_params(),
    };
    Ok(Level {
        style,
        max_depth,
        time: Duration::from_millis(time_ms),
        blunder,
        search,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use caro_engine::Rule;

    fn err_of(raw: RawSearch) -> String {
        SearchConfig::try_from(raw).unwrap_err().to_string()
    }

    #[test]
    fn search_errors_name_the_key_and_bot_games_leave_a_slot() {
        let d = RawSearch::default;
        let s = SearchConfig::try_from(RawSearch {
            max_concurrent: 4,
            ..d()
        })
        .unwrap();
        assert_eq!(s.bot_vs_bot_slots, 3, "all but one by default");
        assert_eq!(s.slots_per_player, 3, "all but one by default");
        let s = SearchConfig::try_from(d()).unwrap();
        assert_eq!((s.max_concurrent, s.bot_vs_bot_slots), (2, 1));
        let s = SearchConfig::try_from(RawSearch {
            max_concurrent: 1,
            ..d()
        })
        .unwrap();
        assert_eq!(s.slots_per_player, 1, "one slot: it is everybody's");
        assert_eq!(
            err_of(RawSearch {
                slots_per_player: Some(0),
                ..d()
            }),
            "search.slots_per_player: must be 1..=search.max_concurrent"
        );
        let err = |raw: RawSearch| SearchConfig::try_from(raw).unwrap_err().to_string();
        assert_eq!(
            err(RawSearch {
                bot_vs_bot_slots: Some(3),
                ..d()
            }),
            "search.bot_vs_bot_slots: must be 1..=search.max_concurrent"
        );
        assert_eq!(
            err(RawSearch {
                max_concurrent: 0,
                ..d()
            }),
            "search.max_concurrent: must be at least 1"
        );
        assert_eq!(
            err(RawSearch { nice: 20, ..d() }),
            "search.nice: must be 0..=19"
        );
        assert_eq!(SearchConfig::try_from(d()).unwrap().idle_threads, 1);
        for bad in [0, 65] {
            assert_eq!(
                err(RawSearch {
                    idle_threads: bad,
                    ..d()
                }),
                "search.idle_threads: must be 1..=64"
            );
        }
        let s = SearchConfig::try_from(RawSearch {
            idle_threads: 2,
            ..d()
        });
        assert_eq!(s.unwrap().idle_threads, 2);
    }

    #[test]
    fn level_errors_name_the_level() {
        let err = |text: &str| Config::from_toml(text).unwrap_err().to_string();
        assert!(
            err("[bots.x]\ndescription=\"\"\ngames=[\"chess\"]\nmax_depth=1\ntime_ms=5\n")
                .starts_with("bots.x.games:")
        );
        assert_eq!(
            err("[bots.\"a b\"]\ndescription=\"\"\ngames=[\"caro\"]\nmax_depth=1\ntime_ms=5\n"),
            "bots.a b: a level name is 1 to 32 of a-z, 0-9, '_' and '-'"
        );
        assert_eq!(
            err(
                "[bots.x]\ndescription=\"\"\ngames=[\"caro\"]\nmax_depth=1\ntime_ms=5\n\
                 blunder=2.0\n"
            ),
            "bots.x.blunder: must be in 0..=1"
        );
        assert_eq!(
            err(
                "[bots.x]\ndescription=\"\"\ngames=[\"caro\"]\nstyle=\"classic\"\nmax_depth=1\n\
                 time_ms=5\nlearnt_ordering=true\n"
            ),
            "bots.x.learnt_ordering: belongs to the full search (style = \"full\"); the classic \
             search has no ordering to learn"
        );
        assert_eq!(
            err("[bots.x]\ndescription=\"\"\ncommand=\"/bin/true\"\ntime_ms=5\nlearnt_ordering=true\n"),
            "bots.x.learnt_ordering: belongs to built-in levels; this level is an outside engine \
             (it has command)"
        );
    }

    /// `learnt_ordering` chooses the level's search numbers: the engine's default (the learnt
    /// table) when true, the levels' (the cell values' order) when false or absent.
    #[test]
    fn learnt_ordering_chooses_the_search_numbers() {
        let search = |extra: &str| {
            let text = format!(
                "[bots.x]\ndescription=\"\"\ngames=[\"caro\"]\nmax_depth=3\ntime_ms=5\n{extra}"
            );
            let c = Config::from_toml(&text).unwrap();
            match &c.bots["x"].engine {
                BotEngine::Builtin(level) => level.search,
                BotEngine::Outside(_) => panic!("a built-in level"),
            }
        };
        assert_eq!(search(""), bot::level_params());
        assert_eq!(search("learnt_ordering=false\n"), bot::level_params());
        assert_eq!(search("learnt_ordering=true\n"), SearchParams::default());
        assert_eq!(bot::level_params().policy, 0);
        assert_ne!(SearchParams::default().policy, 0);
    }

    #[test]
    fn what_an_outside_engine_plays_is_checked_per_game() {
        let c = Config::from_toml(
            "[bots.ext]\ndescription = \"x\"\ntime_ms = 500\ncommand = \"sh\"\n\
             rules = [\"caro\"]\nmin_board = 9\nmax_board = 15\n",
        )
        .unwrap();
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
}
