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

/// While random plies are left (`random.0`, counted down here), one of them: a sane move among
/// the `random.1` best-ordered by `engine`, drawn by `rng`; then `None` (the engine searches).
fn random_move(
    engine: &mut Engine,
    board: &Board,
    random: (&mut usize, usize),
    rng: &mut SmallRng,
) -> Option<Move> {
    let (left, width) = random;
    if *left == 0 {
        return None;
    }
    *left -= 1;
    let sane = engine.sane_candidates(board, width.max(1));
    Some(sane[rng.random_range(0..sane.len())])
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
        let random = (&mut random_left, config.random_width);
        let mv = match random_move(&mut engine, &board, random, &mut rng) {
            Some(mv) => mv,
            None => {
                let r = engine
                    .search(&board, &limits, &stop, &mut |_| {})
                    .expect("an ongoing game has a move");
                samples.push(Sample {
                    moves: board.moves().to_vec(),
                    score: r.score,
                });
                r.best
            }
        };
        board.try_play(mv).expect("the engine plays legal moves");
    }
    Game {
        moves: board.moves().to_vec(),
        status: board.status(),
        samples,
    }
}

/// Plays one game from `opening` under `rules` between two engines, `engines[0]` as X, each
/// searching within `limits` a move and keeping its tables through the game (as `pbrain-caro`
/// does); `seed` draws `random_plies` random sane moves among the `random_width` best-ordered
/// after the opening, so that games of one opening differ. The engines are cleared first. Returns
/// how the game ended (a win, or a draw on a full board).
///
/// # Panics
/// If the opening is not a legal sequence of moves under `rules`.
pub fn duel(
    rules: Rules,
    opening: &[Move],
    engines: [&mut Engine; 2],
    limits: &Limits,
    random: (usize, usize),
    seed: u64,
) -> Status {
    let mut board = Board::from_moves(rules, opening).expect("a legal opening");
    let mut rng = SmallRng::seed_from_u64(seed);
    let stop = AtomicBool::new(false);
    let [x, o] = engines;
    x.clear();
    o.clear();
    let (mut random_left, width) = random;
    while board.status() == Status::Ongoing {
        let engine = if board.moves().len() % 2 == 0 {
            &mut *x
        } else {
            &mut *o
        };
        let mv = match random_move(engine, &board, (&mut random_left, width), &mut rng) {
            Some(mv) => mv,
            None => {
                engine
                    .search(&board, limits, &stop, &mut |_| {})
                    .expect("an ongoing game has a move")
                    .best
            }
        };
        board.try_play(mv).expect("the engine plays legal moves");
    }
    board.status()
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

    #[test]
    fn a_duel_repeats_itself_and_each_engine_plays_its_own_weights() {
        // The same engine on both sides with the same inputs plays the same game twice; with
        // X's threat terms at zero and O's as built, the games differ (the weights are each
        // engine's own).
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let opening = [Move::new(7, 7), Move::new(8, 7)];
        let limits = Limits {
            max_depth: 64,
            time: None,
            time_max: None,
            nodes: Some(3_000),
        };
        let (mut a, mut b) = (Engine::new(1), Engine::new(1));
        // Quiet moves ordered by the cell values, which the weights make: the learnt ordering
        // (the default) would order the flat engine's quiet moves as well as the built one's.
        let cells = crate::bot::level_params();
        a.set_search_params(&cells);
        b.set_search_params(&cells);
        let first = duel(rules, &opening, [&mut a, &mut b], &limits, (2, 5), 3);
        assert!(matches!(first, Status::Won(_) | Status::Draw));
        assert_eq!(
            duel(rules, &opening, [&mut a, &mut b], &limits, (2, 5), 3),
            first
        );
        let mut flat = *crate::search::weights::Weights::built();
        flat.level = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1000];
        flat.eval_class = [0; 8];
        a.set_weights(&flat);
        // Flat levels cannot tell a three from a one: the built weights win with either colour.
        assert_eq!(
            duel(rules, &opening, [&mut a, &mut b], &limits, (0, 1), 0),
            Status::Won(Player::O)
        );
        assert_eq!(
            duel(rules, &opening, [&mut b, &mut a], &limits, (0, 1), 0),
            Status::Won(Player::X)
        );
    }
}
