//! Bot levels: how a bot plays, from a beginner's sparring partner to the strongest search we
//! have. A [`Level`] is plain data (the server reads it from `config.toml`); a [`Bot`] owns an
//! [`Engine`] and a seeded random generator and picks moves for a level.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::search::{Engine, Limits, SearchInfo, SearchResult};
use crate::Board;

/// Which search a level uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Our full search: PVS, TT, threat search, pattern evaluation.
    Full,
    /// The seed project's engine: plain alpha-beta to a fixed depth with its +300/+600
    /// evaluation. A baseline to measure against.
    Classic,
}

/// How a bot plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// Which search.
    pub style: Style,
    /// Deepest iteration, in plies.
    pub max_depth: u8,
    /// Time budget per move.
    pub time: Duration,
    /// Probability in `0.0..=1.0` of playing a weaker candidate instead of the best move.
    pub blunder: f64,
}

/// A bot: a level, an engine and a random generator.
pub struct Bot {
    level: Level,
    engine: Engine,
    _rng: SmallRng,
}

impl Bot {
    /// A bot for `level`, its randomness seeded with `seed`.
    pub fn new(level: Level, seed: u64) -> Bot {
        Bot {
            level,
            engine: Engine::new(16),
            _rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The level this bot plays at.
    pub fn level(&self) -> &Level {
        &self.level
    }

    /// Chooses a move for the side to move; `None` only when the game is over.
    pub fn choose(
        &mut self,
        board: &Board,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        let limits = Limits {
            max_depth: self.level.max_depth,
            time: Some(self.level.time),
            nodes: None,
        };
        self.engine.search(board, &limits, stop, info)
    }
}
