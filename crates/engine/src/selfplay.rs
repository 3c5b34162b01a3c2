//! Self-play games whose positions, labelled with the game's outcome, are the training data of
//! Texel-style tuning of the evaluation (chessprogramming.org/Texel%27s_Tuning_Method: fit the
//! evaluation's weights so that a logistic of the evaluation predicts the results of the games
//! the positions come from). This module is the first step of that pipeline: it plays the games
//! and lists the positions. Writing them to a file is the `selfplay_positions` example's job
//! (this crate does no I/O).
//!
//! A game is reproducible from its inputs: the opening, the rule, the node budget and the seed.
//! Each move is searched by a fresh engine with a node budget and no clock, so the machine's
//! load changes nothing; the seed picks a few random sane moves after the opening
//! ([`Engine::sane_candidates`]: never one that lets the opponent make five at once), so that
//! the games of one opening differ.

use std::sync::atomic::AtomicBool;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::search::{Engine, Limits, Score};
use crate::{Board, Move, Player, Rules, Status};

/// How a game is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The full search's node budget per move.
    pub nodes: u64,
    /// Random sane moves played after the opening, before the engines take over.
    pub random_plies: usize,
    /// Among how many of the best-ordered sane candidates a random move is drawn.
    pub random_width: usize,
    /// Transposition table size of each move's engine, MiB.
    pub tt_mb: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            nodes: 20_000,
            random_plies: 2,
            random_width: 5,
            tt_mb: 4,
        }
    }
}

/// One position of a finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The moves from the empty board to this position (X first).
    pub moves: Vec<Move>,
    /// The search's score of the move played here, for the side to move (a tuner usually drops
    /// positions with a mate score: their value is no evaluation's to predict).
    pub score: Score,
}

/// A finished self-play game.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// Every move, opening and random moves included.
    pub moves: Vec<Move>,
    /// How it ended: a win or a draw (a full board).
    pub status: Status,
    /// The positions the engine searched (after the opening and the random moves), each
    /// before its move.
    pub samples: Vec<Sample>,
}

impl Game {
    /// The result from X's point of view: 1 a win of X, 0.5 a draw, 0 a win of O.
    pub fn result_for_x(&self) -> f64 {
        match self.status {
            Status::Won(Player::X) => 1.0,
            Status::Won(Player::O) => 0.0,
            _ => 0.5,
        }
    }
}

/// Plays one game from `opening` under `rules`; `seed` draws the random moves.
///
/// # Panics
/// If the opening is not a legal sequence of moves under `rules`.
pub fn play(rules: Rules, opening: &[Move], config: &Config, seed: u64) -> Game {
    let mut board = Board::from_moves(rules, opening).expect("a legal opening");
    let mut rng = SmallRng::seed_from_u64(seed);
    let stop = AtomicBool::new(false);
    let mut samples = Vec::new();
    let limits = Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(config.nodes),
    };
    let mut random_left = config.random_plies;
    while board.status() == Status::Ongoing {
        let mut engine = Engine::new(config.tt_mb);
        let mv = if random_left > 0 {
            random_left -= 1;
            let sane = engine.sane_candidates(&board, config.random_width.max(1));
            sane[rng.random_range(0..sane.len())]
        } else {
            let r = engine
                .search(&board, &limits, &stop, &mut |_| {})
                .expect("an ongoing game has a move");
            samples.push(Sample {
                moves: board.moves().to_vec(),
                score: r.score,
            });
            r.best
        };
        board.try_play(mv).expect("the engine plays legal moves");
    }
    Game {
        moves: board.moves().to_vec(),
        status: board.status(),
        samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rule;

    fn config() -> Config {
        Config {
            nodes: 2_000,
            ..Config::default()
        }
    }

    #[test]
    fn a_game_is_reproducible_from_its_seed_and_seeds_vary_it() {
        let rules = Rules::caro(15, 15, Rule::Caro).unwrap();
        let opening = [Move::new(7, 7), Move::new(8, 8), Move::new(6, 8)];
        let a = play(rules, &opening, &config(), 1);
        assert_eq!(a, play(rules, &opening, &config(), 1));
        let others: Vec<Vec<Move>> = (2..6)
            .map(|s| play(rules, &opening, &config(), s).moves)
            .collect();
        assert!(others.iter().any(|m| *m != a.moves), "the seed draws moves");
    }

    #[test]
    fn samples_are_the_searched_positions_of_a_finished_game() {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let opening = [Move::new(7, 7), Move::new(8, 7)];
        let g = play(rules, &opening, &config(), 7);
        assert!(matches!(g.status, Status::Won(_) | Status::Draw));
        assert_eq!(&g.moves[..2], &opening);
        // The first sample follows the opening and the random moves; then one per ply.
        let first = opening.len() + config().random_plies;
        assert_eq!(g.samples.len(), g.moves.len() - first);
        for (i, s) in g.samples.iter().enumerate() {
            assert_eq!(s.moves[..], g.moves[..first + i]);
        }
        // The last move was the engine's and won (or filled the board).
        let last = Board::from_moves(rules, &g.moves).unwrap();
        assert_eq!(last.status(), g.status);
        assert!([0.0, 0.5, 1.0].contains(&g.result_for_x()));
    }
}
