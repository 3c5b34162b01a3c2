//! Bot levels: how a bot plays, from a beginner's sparring partner to the strongest search we
//! have. A [`Level`] is plain data (the server reads it from `config.toml`); a [`Bot`] owns an
//! [`Engine`] and a seeded random generator and picks moves for a level.
//!
//! Blunders: with probability [`Level::blunder`] the bot plays a random move among the few best
//! ordered candidates (other than the search's choice) that do not let the opponent make five at
//! once. Two things a bot never gets wrong, at any level, because a bot that misses them is not
//! weak but broken: it always takes an immediate win, and it always blocks an immediate five
//! when it can (the sane candidates are then exactly the blocks). With `blunder == 0` the bot
//! plays the search's move; its choices depend only on the position, the level and the seed
//! (except under a time budget, where the depth reached depends on the machine).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::search::{Engine, Limits, SearchInfo, SearchResult, WIN};
use crate::{Board, Status};

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

/// How many of the best-ordered candidates a blunder picks from.
const BLUNDER_CANDIDATES: usize = 5;

/// A bot: a level, an engine and a random generator.
pub struct Bot {
    level: Level,
    engine: Engine,
    rng: SmallRng,
}

impl Bot {
    /// A bot for `level`, its randomness seeded with `seed`.
    pub fn new(level: Level, seed: u64) -> Bot {
        Bot {
            level,
            engine: Engine::new(16),
            rng: SmallRng::seed_from_u64(seed),
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
        let mut result = match self.level.style {
            Style::Full => {
                let limits = Limits {
                    max_depth: self.level.max_depth,
                    time: Some(self.level.time),
                    nodes: None,
                };
                self.engine.search(board, &limits, stop, info)?
            }
            Style::Classic => crate::classic::search(board, self.level.max_depth, stop, info)?,
        };
        // Draw the random number whatever happens, so a game's later choices do not depend on
        // whether this move could blunder.
        let roll: f64 = self.rng.random();
        if roll < self.level.blunder && result.score != WIN - 1 {
            let sane = self.engine.sane_candidates(board, BLUNDER_CANDIDATES);
            let wins_now = |m| {
                let mut b = board.clone();
                b.play(m) == Status::Won(board.to_move())
            };
            let candidates: Vec<_> = sane.iter().copied().filter(|&m| m != result.best).collect();
            if sane.first().is_some_and(|&m| wins_now(m)) {
                // Never blunder away a win on the board (the classic engine may not see it).
                result.best = sane[0];
                result.pv = vec![sane[0]];
            } else if !candidates.is_empty() {
                let pick = candidates[self.rng.random_range(0..candidates.len())];
                result.best = pick;
                result.pv = vec![pick];
            }
        }
        Some(result)
    }
}
