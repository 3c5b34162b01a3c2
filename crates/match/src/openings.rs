//! Openings: the starting positions a match plays from, each twice with colours swapped.
//!
//! An opening file has one opening per line; `#` starts a comment and blank lines are skipped.
//! A line is either
//!
//! - a move list in square names, `h8 i9 j8` (column letter from `a`, row from 1, as in
//!   [`caro_engine::positions`]), or
//! - Gomocup offsets from the centre, `0,0 1,1 -1,1` (the form c-gomoku-cli and the Gomocup
//!   opening files use): pairs `dx,dy` added to `(width / 2, height / 2)`. Any separators
//!   between the numbers are accepted (`0, 0, 1, 1` too).
//!
//! Stones alternate from X (black, the first player). Every opening is replayed on a
//! [`Board`] of the match's rule and size when read, so an opening that is off the board, plays
//! on a taken cell or is already decided is rejected with its line number.
//!
//! [`generate`] builds balanced openings with our own search and, optionally, checks each one by
//! self-play playouts in which the colour must not decide the result; `docs/match.md` gives the
//! settings behind `data/openings/`.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caro_engine::positions::{parse_square, square_name};
use caro_engine::search::{is_mate, Engine, Limits, Score};
use caro_engine::{Board, Move, Player, Rules, Status};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A starting position: moves from the empty board, X first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Opening {
    /// The moves, in order.
    pub moves: Vec<Move>,
}

impl Opening {
    /// The empty board (used when a match has no opening file).
    pub fn empty() -> Opening {
        Opening { moves: Vec::new() }
    }
    /// The moves as square names, `h8 i9 j8` (`-` for the empty opening).
    pub fn to_squares(&self) -> String {
        if self.moves.is_empty() {
            return "-".to_string();
        }
        let names: Vec<String> = self.moves.iter().map(|&m| square_name(m)).collect();
        names.join(" ")
    }
}

/// An opening line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("opening line {line}: {message}")]
pub struct OpeningError {
    /// One-based line number in the file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads an opening file for a board of `rules`; see the module docs for the format.
pub fn parse_openings(text: &str, rules: Rules) -> Result<Vec<Opening>, OpeningError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| OpeningError {
            line: i + 1,
            message,
        };
        let moves = parse_line(line, rules).map_err(err)?;
        Board::from_moves(rules, &moves)
            .map_err(|e| err(format!("{e}")))
            .and_then(|b| match b.status() {
                Status::Ongoing => Ok(()),
                s => Err(err(format!("the game is already over ({s:?})"))),
            })?;
        openings.push(Opening { moves });
    }
    Ok(openings)
}

/// One line's moves, in square names or centre offsets.
fn parse_line(line: &str, rules: Rules) -> Result<Vec<Move>, String> {
    if !line.contains(',') {
        return line
            .split_whitespace()
            .map(|t| {
                parse_square(&t.to_ascii_lowercase()).ok_or_else(|| format!("bad square {t:?}"))
            })
            .collect();
    }
    let numbers: Vec<i64> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<i64>().map_err(|_| format!("bad offset {t:?}")))
        .collect::<Result<_, _>>()?;
    if numbers.len() % 2 != 0 {
        return Err(format!("{} numbers: offsets come in pairs", numbers.len()));
    }
    let (cx, cy) = (rules.width() as i64 / 2, rules.height() as i64 / 2);
    numbers
        .chunks(2)
        .map(|p| {
            let (x, y) = (cx + p[0], cy + p[1]);
            if (0..rules.width() as i64).contains(&x) && (0..rules.height() as i64).contains(&y) {
                Ok(Move::new(x as u8, y as u8))
            } else {
                Err(format!("offset {},{} is off the board", p[0], p[1]))
            }
        })
        .collect()
}

/// How [`generate`] builds and filters openings.
#[derive(Clone, Debug)]
pub struct GenerateSettings {
    /// Rule and board.
    pub rules: Rules,
    /// How many openings to keep.
    pub count: usize,
    /// Fewest stones in an opening.
    pub min_stones: usize,
    /// Most stones in an opening.
    pub max_stones: usize,
    /// Stones go within this Chebyshev distance of the centre.
    pub radius: u8,
    /// Search depth of the check.
    pub depth: u8,
    /// Time cap of the check's search (per opening); `None`: no time limit.
    pub time: Option<Duration>,
    /// Node budget of the check's search (per opening); `None`: no node limit. With a node
    /// budget and no time cap, the generator's output depends on its inputs alone.
    pub nodes: Option<u64>,
    /// Playout pairs each opening must pass, in order (none: no playouts); see [`Playout`].
    pub playouts: Vec<Playout>,
    /// Keep an opening only if the search's score for the side to move is within
    /// `-window..=window` (and no mate is announced for either side).
    pub window: i32,
    /// Seed of the random stone placement.
    pub seed: u64,
    /// Give up after this many candidates.
    pub max_tries: usize,
}

/// One playout pair of the verification: two self-play games from the opening between our
/// engine at two node budgets, `a` and `b`, each budget playing X once. The opening passes the
/// pair when the two games end differently for X (one won by X and one not, or one drawn and
/// one decided): then the budget, not the colour, made the difference. A pair that X wins twice,
/// O wins twice, or that is drawn twice is what a match pair of an opening the colour decides
/// looks like, and carries no information about which engine is stronger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Playout {
    /// The first budget, nodes per move.
    pub a: u64,
    /// The second budget, nodes per move.
    pub b: u64,
}

impl std::fmt::Display for Playout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.a, self.b)
    }
}

impl std::str::FromStr for Playout {
    type Err = String;
    /// `A/B`, two node budgets, for example `30000/40000`.
    fn from_str(s: &str) -> Result<Playout, String> {
        let bad = || format!("{s:?}: expected two node budgets A/B, like 30000/40000");
        let (a, b) = s.split_once('/').ok_or_else(bad)?;
        let parse = |t: &str| t.trim().parse::<u64>().ok().filter(|&n| n > 0);
        match (parse(a), parse(b)) {
            (Some(a), Some(b)) if a != b => Ok(Playout { a, b }),
            (Some(_), Some(_)) => Err(format!(
                "{s:?}: the budgets must differ (equal budgets play the same game twice)"
            )),
            _ => Err(bad()),
        }
    }
}

/// A kept opening with the search's verdict.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The opening.
    pub opening: Opening,
    /// The search score for the side to move.
    pub score: Score,
    /// Depth the search completed.
    pub depth: u8,
    /// The playout games' results for X, two per [`Playout`] in the order of the settings
    /// (the game with `a` as X first): 1 a win of X, 0.5 a draw, 0 a win of O.
    pub playouts: Vec<f64>,
}

/// What [`generate`] did with its candidates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Candidates drawn (including decided ones and duplicates).
    pub candidates: usize,
    /// Distinct ongoing candidates searched.
    pub searched: usize,
    /// Of those, within the window with no mate: the ones the playouts checked.
    pub balanced: usize,
    /// Of those, rejected by a playout pair that the colour decided.
    pub colour_decided: usize,
}

/// X's result of one self-play game from `opening`: X searches `x_nodes` a move, O `o_nodes`,
/// each with its own engine kept for the whole game (as `pbrain-caro` keeps its tables between
/// moves), one thread, no clock: the result depends on the inputs alone.
pub fn playout(rules: Rules, opening: &[Move], x_nodes: u64, o_nodes: u64) -> f64 {
    let mut board = Board::from_moves(rules, opening).expect("a legal opening");
    let mut engines = [Engine::new(16), Engine::new(16)];
    let stop = AtomicBool::new(false);
    while board.status() == Status::Ongoing {
        // Engine 0 plays X, the side to move after an even number of stones.
        let side = board.moves().len() % 2;
        let limits = Limits {
            max_depth: 64,
            time: None,
            time_max: None,
            nodes: Some(if side == 0 { x_nodes } else { o_nodes }),
        };
        let r = engines[side]
            .search(&board, &limits, &stop, &mut |_| {})
            .expect("an ongoing game has a move");
        board.play(r.best);
    }
    match board.status() {
        Status::Won(Player::X) => 1.0,
        Status::Won(Player::O) => 0.0,
        _ => 0.5,
    }
}

/// Random openings near the centre that our engine judges balanced: stones are dropped for X and
/// O alternately on empty cells, the first within one cell of the centre and each next one within
/// two cells of an earlier stone, all within `radius` of the centre; a candidate is kept if the game is
/// still on, it is new up to the board's symmetries, a search of
/// [`caro_engine::search::Engine`] to `depth` (capped by `time` and `nodes`) scores it within the
/// window for the side to move with no mate either way, and every playout pair of the settings
/// ends differently for X (see [`Playout`]; the pairs are played in order and the first that
/// the colour decides rejects the opening). The scores are the engine's evaluation units.
/// `on_kept` sees each opening as it is kept (a long run can print as it goes); its `Break`
/// ends the run there (the reader of what it prints went away). The output is
/// deterministic when `time` is `None`, and a smaller `count` keeps a prefix of a larger one's.
pub fn generate(
    settings: &GenerateSettings,
    on_kept: &mut dyn FnMut(&Generated) -> ControlFlow<()>,
) -> (Vec<Generated>, Tally) {
    let rules = settings.rules;
    let mut rng = SmallRng::seed_from_u64(settings.seed);
    let mut engine = Engine::new(16);
    let stop = AtomicBool::new(false);
    let (cx, cy) = (rules.width() as i64 / 2, rules.height() as i64 / 2);
    let r = settings.radius as i64;
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    let mut tally = Tally::default();
    for _ in 0..settings.max_tries {
        if kept.len() >= settings.count {
            break;
        }
        tally.candidates += 1;
        let stones = rng.random_range(settings.min_stones..=settings.max_stones);
        let mut board = Board::new(rules);
        let mut ok = true;
        while board.moves().len() < stones && ok {
            // Openings are played in a cluster: the first stone within one cell of the centre,
            // each later one within two cells of a stone already placed (scattered stones make
            // positions no game reaches), all within `radius` of the centre.
            let (ax, ay) = match board.moves() {
                [] => (cx, cy),
                placed => {
                    let m = placed[rng.random_range(0..placed.len())];
                    (m.x as i64, m.y as i64)
                }
            };
            let step = if board.moves().is_empty() { 1 } else { 2 };
            let x = ax + rng.random_range(-step..=step);
            let y = ay + rng.random_range(-step..=step);
            if (x - cx).abs() > r || (y - cy).abs() > r {
                continue;
            }
            match board.check(x, y) {
                Ok(mv) => {
                    board.play(mv);
                }
                Err(_) => continue,
            }
            ok = board.status() == Status::Ongoing;
        }
        if !ok || !seen.insert(canonical(&board)) {
            continue;
        }
        engine.clear();
        tally.searched += 1;
        let limits = Limits {
            max_depth: settings.depth,
            time: settings.time,
            time_max: None,
            nodes: settings.nodes,
        };
        let Some(result) = engine.search(&board, &limits, &stop, &mut |_| {}) else {
            continue;
        };
        if is_mate(result.score) || result.score.abs() > settings.window {
            continue;
        }
        tally.balanced += 1;
        let (passed, results) = verify(rules, board.moves(), &settings.playouts);
        if !passed {
            tally.colour_decided += 1;
            continue;
        }
        let generated = Generated {
            opening: Opening {
                moves: board.moves().to_vec(),
            },
            score: result.score,
            depth: result.depth,
            playouts: results,
        };
        let flow = on_kept(&generated);
        kept.push(generated);
        if flow.is_break() {
            break;
        }
    }
    (kept, tally)
}

/// Plays the playout pairs from `opening` in order until one ends the same for X in both games
/// (the colour decided it): whether none did, and X's results of the games played, two a pair.
pub fn verify(rules: Rules, opening: &[Move], playouts: &[Playout]) -> (bool, Vec<f64>) {
    let mut results = Vec::new();
    for p in playouts {
        let first = playout(rules, opening, p.a, p.b);
        let second = playout(rules, opening, p.b, p.a);
        results.extend([first, second]);
        if first == second {
            return (false, results);
        }
    }
    (true, results)
}

/// Sorted X stones and sorted O stones: a position regardless of move order.
type Canonical = (Vec<(i64, i64)>, Vec<(i64, i64)>);
/// A symmetry of an `n` x `n` board: `(x, y, n)` to the image of `(x, y)`.
type Transform = fn(i64, i64, i64) -> (i64, i64);

/// The position up to the 8 symmetries of a square board about its centre (only the identity
/// on other boards): the smallest of the transformed (sorted X stones, sorted O stones).
fn canonical(board: &Board) -> Canonical {
    let (w, h) = (board.width() as i64, board.height() as i64);
    let transforms: &[Transform] = if w == h {
        &[
            |x, y, _| (x, y),
            |x, y, n| (n - 1 - x, y),
            |x, y, n| (x, n - 1 - y),
            |x, y, n| (n - 1 - x, n - 1 - y),
            |x, y, _| (y, x),
            |x, y, n| (n - 1 - y, x),
            |x, y, n| (y, n - 1 - x),
            |x, y, n| (n - 1 - y, n - 1 - x),
        ]
    } else {
        &[|x, y, _| (x, y)]
    };
    transforms
        .iter()
        .map(|t| {
            let mut sides = [Vec::new(), Vec::new()];
            for (i, m) in board.moves().iter().enumerate() {
                sides[i % 2].push(t(m.x as i64, m.y as i64, w));
            }
            sides[0].sort_unstable();
            sides[1].sort_unstable();
            let [x, o] = sides;
            (x, o)
        })
        .min()
        .expect("at least the identity")
}

#[cfg(test)]
mod tests {
    use super::*;
    use caro_engine::Rule;

    fn rules() -> Rules {
        Rules::caro(15, 15, Rule::Caro).unwrap()
    }

    #[test]
    fn both_formats_give_the_same_opening() {
        let text = "# a comment\n\nh8 i9 j8\n0,0 1,1 2,0   # trailing comment\n0, 0, 1, 1, 2, 0\n";
        let openings = parse_openings(text, rules()).unwrap();
        assert_eq!(openings.len(), 3);
        let expected = vec![Move::new(7, 7), Move::new(8, 8), Move::new(9, 7)];
        for o in &openings {
            assert_eq!(o.moves, expected);
        }
        assert_eq!(openings[0].to_squares(), "h8 i9 j8");
    }

    #[test]
    fn offsets_are_from_the_centre_of_any_board() {
        let r = Rules::caro(20, 20, Rule::Freestyle).unwrap();
        let o = parse_openings("0,0 -1,2", r).unwrap();
        assert_eq!(o[0].moves, vec![Move::new(10, 10), Move::new(9, 12)]);
    }

    #[test]
    fn bad_openings_are_rejected_with_their_line() {
        let e = parse_openings("h8\nh8 h8\n", rules()).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(parse_openings("8,0", rules()).is_err(), "off the board");
        assert!(parse_openings("0,0 1", rules()).is_err(), "odd count");
        assert!(parse_openings("zz", rules()).is_err());
        // X already has five.
        let won = "a1 a15 b1 b15 c1 c15 d1 d15 e1";
        assert!(parse_openings(won, rules()).is_err());
    }

    #[test]
    fn symmetric_openings_are_the_same() {
        let a = Board::from_moves(rules(), &[Move::new(7, 7), Move::new(8, 8)]).unwrap();
        let b = Board::from_moves(rules(), &[Move::new(7, 7), Move::new(6, 6)]).unwrap();
        let c = Board::from_moves(rules(), &[Move::new(7, 7), Move::new(8, 7)]).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(canonical(&a), canonical(&c));
    }

    #[test]
    fn playout_pairs_parse_as_two_different_budgets() {
        assert_eq!(
            "30000/40000".parse::<Playout>(),
            Ok(Playout { a: 30000, b: 40000 })
        );
        assert_eq!(Playout { a: 5, b: 7 }.to_string(), "5/7");
        for bad in ["30000", "5/5", "0/3", "a/3", "3/", "1/2/3"] {
            assert!(bad.parse::<Playout>().is_err(), "{bad}");
        }
    }

    #[test]
    fn an_opening_x_has_won_is_rejected_by_its_first_pair() {
        // X has an open four (e8 f8 g8 h8) and O cannot stop both ends: whatever the budgets,
        // X wins both games, the colour decides, and the second pair is never played.
        let r = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let opening = parse_openings("e8 e1 f8 f1 g8 g1 h8", r).unwrap();
        let pairs = [Playout { a: 500, b: 800 }, Playout { a: 900, b: 1200 }];
        let (passed, results) = verify(r, &opening[0].moves, &pairs);
        assert!(!passed);
        assert_eq!(results, vec![1.0, 1.0]);
    }

    #[test]
    fn playouts_are_reproducible() {
        let r = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let opening = [Move::new(7, 7), Move::new(8, 8), Move::new(6, 8)];
        let a = playout(r, &opening, 1500, 2500);
        assert_eq!(a, playout(r, &opening, 1500, 2500));
        assert!([0.0, 0.5, 1.0].contains(&a));
    }

    #[test]
    fn kept_openings_passed_every_playout_pair() {
        let r = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let pairs = vec![Playout { a: 1000, b: 1600 }, Playout { a: 2000, b: 3000 }];
        let settings = GenerateSettings {
            rules: r,
            count: 2,
            min_stones: 3,
            max_stones: 4,
            radius: 2,
            depth: 64,
            time: None,
            nodes: Some(5_000),
            playouts: pairs.clone(),
            window: 300,
            // Which candidates pass depends on the engine's search and evaluation. With the
            // search of `882d9b7` seed 5 kept two after 31 candidates (seed 3, the seed before,
            // tried all 300 and every balanced one was decided by its colour); with the strong
            // three's term (2026-11-28) seed 5 and 6 tried all 300 the same way, seed 7 keeps two;
            // with the learnt ordering on (2026-11-29) seed 7 keeps one, 8, 9, 11 and 13 none or
            // one, seed 10 two; with the cell values' first quiet move kept first (`keep`,
            // 2026-12-03) seed 10 and 4 fall short, seed 6 keeps two.
            seed: 6,
            max_tries: 300,
        };
        let mut seen = Vec::new();
        let (kept, tally) = generate(&settings, &mut |g| {
            seen.push(g.opening.clone());
            ControlFlow::Continue(())
        });
        assert_eq!(kept.len(), 2, "{tally:?}");
        let openings: Vec<Opening> = kept.iter().map(|g| g.opening.clone()).collect();
        assert_eq!(seen, openings, "on_kept saw each kept opening, in order");
        assert_eq!(
            tally.balanced - tally.colour_decided,
            kept.len(),
            "{tally:?}"
        );
        assert!(tally.searched <= tally.candidates && tally.balanced <= tally.searched);
        for g in &kept {
            assert_eq!(g.playouts.len(), 4);
            for pair in g.playouts.chunks(2) {
                assert_ne!(pair[0], pair[1], "the colour decided {:?}", g.playouts);
            }
            // The recorded results are what the playouts give again.
            assert_eq!(
                verify(r, &g.opening.moves, &pairs),
                (true, g.playouts.clone())
            );
        }
        // With a node budget and no clock, a run is reproducible and a smaller count keeps a
        // prefix of a larger one's.
        let one = GenerateSettings {
            count: 1,
            ..settings.clone()
        };
        let (first, _) = generate(&one, &mut |_| ControlFlow::Continue(()));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].opening, kept[0].opening);
        assert_eq!(first[0].playouts, kept[0].playouts);
        // A `Break` from `on_kept` ends the run at the opening it saw.
        let (cut, _) = generate(&settings, &mut |_| ControlFlow::Break(()));
        assert_eq!(cut.len(), 1);
        assert_eq!(cut[0].opening, kept[0].opening);
    }

    #[test]
    fn generated_openings_are_balanced_and_distinct() {
        let settings = GenerateSettings {
            rules: rules(),
            count: 3,
            min_stones: 3,
            max_stones: 4,
            radius: 2,
            depth: 2,
            time: Some(Duration::from_millis(50)),
            nodes: None,
            playouts: Vec::new(),
            window: 300,
            seed: 7,
            max_tries: 200,
        };
        let (kept, _) = generate(&settings, &mut |_| ControlFlow::Continue(()));
        assert_eq!(kept.len(), 3);
        for g in &kept {
            assert!(g.score.abs() <= 300);
            assert!((3..=4).contains(&g.opening.moves.len()));
        }
    }
}
