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

use crate::search::params::SearchParams;
use crate::search::time::Budget;
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
    /// The full search's tunable numbers, given to the bot's engine
    /// ([`Engine::set_search_params`]): [`level_params`] for a level that orders quiet moves by
    /// the cell values, [`SearchParams::default`] for one that takes the learnt table (the
    /// server's `learnt_ordering` key). Unused by the classic style.
    pub search: SearchParams,
}

/// The search numbers the bot levels are calibrated with: those of the SPSA run of 2026-11-27,
/// with quiet moves ordered by the cell values alone (`policy` 0), as when the ladder of
/// docs/strength.md was measured. The learnt ordering, the engine's default since, was chosen
/// at full strength against Rapfi; a level takes it with [`SearchParams::default`] as its
/// [`Level::search`] (the server's `learnt_ordering` key, docs/bots.md), once the ladder has
/// measured it so. Spelt out rather than derived from the default, so that a change of the
/// engine's numbers never moves the levels unmeasured (`pbrain-caro --level-numbers` plays
/// them for the ladder).
pub fn level_params() -> SearchParams {
    SearchParams {
        lmr_k: 0.68,
        lmr_base: 0.87,
        lmp_base: 1,
        lmp_quarters: 4,
        nmp_depth: 3,
        nmp_base: 2,
        nmp_div: 4,
        rfp_depth: 4,
        rfp_margin: 198,
        tactical: 320,
        defence: 13,
        killers: [248, 201],
        aspiration: 152,
        vct_sixteenths: 5,
        policy: 0,
        by_value: 0,
        keep: 0,
        bonuses: 16,
    }
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
        Bot::with_table(level, seed, 16)
    }

    /// A bot for `level` whose engine's transposition table uses about `tt_mb` MiB.
    pub fn with_table(level: Level, seed: u64, tt_mb: usize) -> Bot {
        Bot::with_engine(level, seed, Engine::new(tt_mb))
    }

    /// A bot for `level` that searches with `engine`, a used one welcome: its tables are aged,
    /// not cleared, so what it learnt on earlier moves (of this game or another) still helps.
    /// This is how the server reuses one engine per search slot instead of allocating its
    /// tables for every move; [`Bot::into_engine`] gives the engine back. The engine searches
    /// with the level's numbers ([`Level::search`]) from now on.
    pub fn with_engine(level: Level, seed: u64, mut engine: Engine) -> Bot {
        engine.set_search_params(&level.search);
        Bot {
            level,
            engine,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The bot's engine, for the next bot to reuse (see [`Bot::with_engine`]).
    pub fn into_engine(self) -> Engine {
        self.engine
    }

    /// The level this bot plays at.
    pub fn level(&self) -> &Level {
        &self.level
    }

    /// Gives the engine a table of about `tt_mb` MiB ([`Engine::resize_table`]: threads,
    /// weights and search numbers stay); the random generator goes on.
    pub fn resize_table(&mut self, tt_mb: usize) {
        self.engine.resize_table(tt_mb);
    }

    /// Searches with `threads` threads from now on ([`Engine::set_threads`]; the classic
    /// style always uses one).
    pub fn set_threads(&mut self, threads: usize) {
        self.engine.set_threads(threads);
    }

    /// Forgets what the engine learnt (between games); the random generator goes on.
    pub fn clear(&mut self) {
        self.engine.clear();
    }

    /// Chooses a move for the side to move; `None` only when the game is over.
    pub fn choose(
        &mut self,
        board: &Board,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        self.choose_within(board, self.level.time, stop, info)
    }

    /// As [`Bot::choose`], with the time budget the smaller of the level's and `time` (a
    /// protocol front end's clock). The classic style has no clock of its own: only `stop`
    /// ends it early.
    pub fn choose_within(
        &mut self,
        board: &Board,
        time: Duration,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        let budget = Budget {
            optimum: time,
            maximum: None,
        };
        self.choose_limited(board, budget, None, stop, info)
    }

    /// As [`Bot::choose_within`], with a match clock's budget (an optimum the search scales
    /// by the answer's stability, up to a maximum: [`crate::search::time`]) and a node budget
    /// for the full search too (`pbrain-caro --nodes`: self-play that does not depend on the
    /// machine's load). The level's time caps both times. The classic style ignores all but
    /// the stop flag.
    pub fn choose_limited(
        &mut self,
        board: &Board,
        budget: Budget,
        nodes: Option<u64>,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        let mut result = match self.level.style {
            Style::Full => {
                let limits = Limits {
                    max_depth: self.level.max_depth,
                    time: Some(self.level.time.min(budget.optimum)),
                    time_max: budget.maximum.map(|m| self.level.time.min(m)),
                    nodes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Move, Rules};

    fn level(blunder: f64) -> Level {
        Level {
            style: Style::Full,
            max_depth: 4,
            time: Duration::from_secs(5),
            blunder,
            search: level_params(),
        }
    }

    fn board(x: &[(u8, u8)], o: &[(u8, u8)]) -> Board {
        let m = |v: &[(u8, u8)]| v.iter().map(|&(a, b)| Move::new(a, b)).collect::<Vec<_>>();
        Board::set_up(Rules::caro_default(), &m(x), &m(o)).unwrap()
    }

    #[test]
    fn engine_and_bot_are_send() {
        fn send<T: Send>() {}
        send::<Engine>();
        send::<Bot>();
    }

    #[test]
    fn a_blundering_bot_still_wins_and_blocks() {
        let stop = AtomicBool::new(false);
        // X to move with four in a row: must win.
        let win = board(
            &[(3, 7), (4, 7), (5, 7), (6, 7)],
            &[(3, 9), (5, 9), (9, 2), (12, 12)],
        );
        // O to move facing X's four (blocked on one side): must block at (7, 7).
        let block = board(
            &[(3, 7), (4, 7), (5, 7), (6, 7), (11, 11)],
            &[(2, 7), (5, 9), (9, 2), (12, 12)],
        );
        for seed in 0..20 {
            let mut bot = Bot::new(level(1.0), seed);
            let r = bot.choose(&win, &stop, &mut |_| {}).unwrap();
            assert!(
                [Move::new(2, 7), Move::new(7, 7)].contains(&r.best),
                "{}",
                r.best
            );
            let r = bot.choose(&block, &stop, &mut |_| {}).unwrap();
            assert_eq!(r.best, Move::new(7, 7), "seed {seed}");
        }
    }

    #[test]
    fn plays_mnk_games_too() {
        let stop = AtomicBool::new(false);
        // 7x6, four in a row: X has three with both ends open and wins at once.
        let rules = Rules::mnk(7, 6, 4).unwrap();
        let m = |v: &[(u8, u8)]| v.iter().map(|&(a, b)| Move::new(a, b)).collect::<Vec<_>>();
        let b = Board::set_up(rules, &m(&[(2, 3), (3, 3), (4, 3)]), &m(&[(0, 0), (6, 5)])).unwrap();
        let r = Bot::new(level(0.0), 3)
            .choose(&b, &stop, &mut |_| {})
            .unwrap();
        assert!(
            [Move::new(1, 3), Move::new(5, 3)].contains(&r.best),
            "{}",
            r.best
        );
        // And from the empty board it answers at all.
        let empty = Board::new(rules);
        assert!(Bot::new(level(0.0), 3)
            .choose(&empty, &stop, &mut |_| {})
            .is_some());
    }

    /// Self-play smoke test on every rule and some odd board sizes: every move is legal and
    /// nothing panics, whether the game ends or the move cap is hit.
    #[test]
    fn self_play_is_legal_on_all_rules_and_sizes() {
        use crate::Rule;
        let stop = AtomicBool::new(false);
        let quick = |blunder| Level {
            style: Style::Full,
            max_depth: 3,
            time: Duration::from_millis(15),
            blunder,
            search: level_params(),
        };
        let mut games: Vec<Rules> = Rule::ALL
            .iter()
            .map(|&r| Rules::caro(15, 15, r).unwrap())
            .collect();
        games.push(Rules::caro(5, 5, Rule::Caro).unwrap());
        games.push(Rules::caro(32, 20, Rule::Freestyle).unwrap());
        games.push(Rules::mnk(5, 5, 4).unwrap());
        games.push(Rules::mnk(8, 8, 7).unwrap());
        for (n, rules) in games.into_iter().enumerate() {
            let mut bots = [Bot::new(quick(0.3), n as u64), Bot::new(quick(0.0), 1)];
            let mut board = Board::new(rules);
            for ply in 0..60 {
                if board.status() != Status::Ongoing {
                    break;
                }
                let r = bots[ply % 2].choose(&board, &stop, &mut |_| {}).unwrap();
                board
                    .try_play(r.best)
                    .unwrap_or_else(|e| panic!("{rules:?}: {e}"));
            }
        }
    }

    /// One engine lent from bot to bot across games of every rule and several sizes, starting
    /// from the same stones (so the hashes coincide), as a server's search slot does: every
    /// move is legal. A table or move cache keyed by stones alone would hand one board's cells
    /// to another.
    #[test]
    fn one_engine_serves_games_of_any_rule_and_size() {
        use crate::Rule;
        let stop = AtomicBool::new(false);
        let quick = Level {
            style: Style::Full,
            max_depth: 4,
            time: Duration::from_secs(5),
            blunder: 0.0,
            search: level_params(),
        };
        let stones = [(3, 3), (4, 3), (4, 4), (5, 5), (3, 5)];
        let mut engine = Some(Engine::new(1));
        for round in 0..2 {
            for (w, h) in [(15, 15), (9, 9), (20, 12), (12, 20)] {
                for &rule in Rule::ALL.iter() {
                    let mut board = Board::new(Rules::caro(w, h, rule).unwrap());
                    for &(x, y) in &stones {
                        board.play(Move::new(x, y));
                    }
                    for _ in 0..12 {
                        if board.status() != Status::Ongoing {
                            break;
                        }
                        let mut bot = Bot::with_engine(quick, round, engine.take().unwrap());
                        let r = bot.choose(&board, &stop, &mut |_| {}).unwrap();
                        engine = Some(bot.into_engine());
                        board
                            .try_play(r.best)
                            .unwrap_or_else(|e| panic!("{w}x{h} {rule:?}: {e}"));
                    }
                }
            }
        }
    }

    #[test]
    fn blunders_happen_and_are_seeded() {
        let stop = AtomicBool::new(false);
        let b = board(&[(7, 7), (8, 8)], &[(7, 8)]);
        let best = Bot::new(level(0.0), 1)
            .choose(&b, &stop, &mut |_| {})
            .unwrap()
            .best;
        let same = Bot::new(level(0.0), 99)
            .choose(&b, &stop, &mut |_| {})
            .unwrap()
            .best;
        assert_eq!(best, same, "no randomness without blunders");
        let picks: Vec<Move> = (0..20)
            .map(|seed| {
                Bot::new(level(1.0), seed)
                    .choose(&b, &stop, &mut |_| {})
                    .unwrap()
                    .best
            })
            .collect();
        assert!(
            picks.iter().all(|&m| m != best),
            "a blunder is another move"
        );
        let again: Vec<Move> = (0..20)
            .map(|seed| {
                Bot::new(level(1.0), seed)
                    .choose(&b, &stop, &mut |_| {})
                    .unwrap()
                    .best
            })
            .collect();
        assert_eq!(picks, again, "same seed, same choices");
    }
}
