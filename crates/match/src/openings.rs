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
//! [`generate`] builds balanced openings with our own search; `docs/match.md` gives the settings
//! behind `data/openings/`.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caro_engine::positions::{parse_square, square_name};
use caro_engine::search::{is_mate, Engine, Limits, Score};
use caro_engine::{Board, Move, Rules, Status};
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
    /// Time cap of the check's search (per opening).
    pub time: Duration,
    /// Keep an opening only if the search's score for the side to move is within
    /// `-window..=window` (and no mate is announced for either side).
    pub window: i32,
    /// Seed of the random stone placement.
    pub seed: u64,
    /// Give up after this many candidates.
    pub max_tries: usize,
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
}

/// Random openings near the centre that our engine judges balanced: stones are dropped for X and
/// O alternately on empty cells, the first within one cell of the centre and each next one within
/// two cells of an earlier stone, all within `radius` of the centre; a candidate is kept if the game is
/// still on, it is new up to the board's symmetries, and a search of
/// [`caro_engine::search::Engine`] to `depth` (capped by `time`) scores it within the window for
/// the side to move with no mate either way. The scores are the engine's evaluation units.
pub fn generate(settings: &GenerateSettings) -> Vec<Generated> {
    let rules = settings.rules;
    let mut rng = SmallRng::seed_from_u64(settings.seed);
    let mut engine = Engine::new(16);
    let stop = AtomicBool::new(false);
    let (cx, cy) = (rules.width() as i64 / 2, rules.height() as i64 / 2);
    let r = settings.radius as i64;
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    for _ in 0..settings.max_tries {
        if kept.len() >= settings.count {
            break;
        }
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
        let limits = Limits {
            max_depth: settings.depth,
            time: Some(settings.time),
            time_max: None,
            nodes: None,
        };
        let Some(result) = engine.search(&board, &limits, &stop, &mut |_| {}) else {
            continue;
        };
        if is_mate(result.score) || result.score.abs() > settings.window {
            continue;
        }
        kept.push(Generated {
            opening: Opening {
                moves: board.moves().to_vec(),
            },
            score: result.score,
            depth: result.depth,
        });
    }
    kept
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
    fn generated_openings_are_balanced_and_distinct() {
        let settings = GenerateSettings {
            rules: rules(),
            count: 3,
            min_stones: 3,
            max_stones: 4,
            radius: 2,
            depth: 2,
            time: Duration::from_millis(50),
            window: 300,
            seed: 7,
            max_tries: 200,
        };
        let kept = generate(&settings);
        assert_eq!(kept.len(), 3);
        for g in &kept {
            assert!(g.score.abs() <= 300);
            assert!((3..=4).contains(&g.opening.moves.len()));
        }
    }
}
