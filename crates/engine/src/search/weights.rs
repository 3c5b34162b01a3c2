//! The pattern evaluation's weights: the value of each line [`Level`](super::pattern::Level)
//! and the extra value of each combined [`Class`](super::position::Class) of a cell (the
//! cross-line combinations: four-three, double three, open four or double four...). A cell's
//! value for a player is the sum of its four lines' level values plus its class's value and
//! its cross-line term ([`Weights::plus`]: a double two, a three or a four with a two beside
//! it); the evaluation sums the cells (see [`position`](super::position)).
//!
//! The numbers live in `weights.txt` beside this file, built in with `include_str!` and parsed
//! once on first use: the engine reads no file. The `texel` example (docs/engine.md, "Texel
//! tuning") fits them to self-play outcomes and writes that file; [`Weights::to_text`] and
//! [`Weights::parse`] are the format's two directions.

use std::sync::OnceLock;

use super::position::CLASSES;

/// Number of line levels ([`pattern::NONE`](super::pattern::NONE) to
/// [`pattern::F5`](super::pattern::F5)).
pub const LEVELS: usize = 11;

/// The weights file as built into the engine.
pub const BUILT_TEXT: &str = include_str!("weights.txt");

/// The evaluation's weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Value of one line level, indexed by level.
    pub level: [i32; LEVELS],
    /// Extra value of a cell by class, indexed by class.
    pub class: [i32; CLASSES],
    /// Extra value of a cell by class for the evaluation alone (the move ordering, which
    /// reads the cell values, does not see it): the cross-line combination terms the tuner
    /// fits without moving the search's thresholds. Optional in the file (zeros). These are
    /// the side to move's cells; [`Weights::eval_class_opp`] the opponent's.
    pub eval_class: [i32; CLASSES],
    /// The same for the opponent's cells, subtracted: a square is worth more to the side that
    /// moves next (he can use it first). Optional in the file: without it, `eval_class`, and
    /// the term is symmetric.
    pub eval_class_opp: [i32; CLASSES],
    /// The evaluation's threat terms ([`threat_bonus`](super::eval::threat_bonus)): for the
    /// side to move's open-four (or double-four) square, its four-three square, its double
    /// three that the opponent cannot answer with a four, and (subtracted) two open-four squares
    /// of the opponent with no four to answer them. Optional in the file
    /// ([`DEFAULT_BONUS`], the values they had as constants).
    pub bonus: [i32; BONUSES],
    /// Extra value of a cell whose class meets a developing line (a two or a blocked three:
    /// level `F2` or `B3`) on another of its four lines: a development cell with two or more
    /// such lines (a double two, which one more stone can turn into a double three), an open
    /// three with one, a four with one. These are the cross-line combinations the eight classes
    /// do not tell apart (issue 20). The fourth is an open three of which one line is a strong
    /// one (level `F3S`: two cells make it an open four), with or without a developing line.
    /// Optional in the file (zeros).
    pub plus: [i32; PLUSES],
}

/// Number of cross-line "plus" terms ([`Weights::plus`]).
pub const PLUSES: usize = 4;

/// Number of threat terms ([`Weights::bonus`]).
pub const BONUSES: usize = 4;

/// The threat terms of a file without a `bonus` line.
pub const DEFAULT_BONUS: [i32; BONUSES] = [3000, 1500, 800, 800];

/// Why a weights file (or the learnt ordering's, [`Policy`](super::policy::Policy)) does not
/// parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// A line names no known table.
    #[error("line {line}: unknown key {key:?} (expected {expected})")]
    UnknownKey {
        /// 1-based line number.
        line: usize,
        /// The first word of the line.
        key: String,
        /// The keys the format knows.
        expected: &'static str,
    },
    /// A table has the wrong number of values or a value is not an integer.
    #[error("line {line}: `{key}` needs {expected} integers")]
    BadValues {
        /// 1-based line number.
        line: usize,
        /// The table.
        key: &'static str,
        /// How many values it has.
        expected: usize,
    },
    /// A table is missing or given twice.
    #[error("`{0}` must appear exactly once")]
    Count(&'static str),
}

/// The `N` integers of table `key` on line `line`, or why not.
pub(super) fn values<const N: usize>(
    words: std::str::SplitWhitespace<'_>,
    line: usize,
    key: &'static str,
) -> Result<[i32; N], ParseError> {
    let bad = || ParseError::BadValues {
        line,
        key,
        expected: N,
    };
    let v: Vec<i32> = words
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    v.try_into().map_err(|_| bad())
}

impl Weights {
    /// Parses the weights file format: `#` comments, blank lines, and one line each of
    /// `level v0 .. v10` and `class v0 .. v7`, and at most one each of `eval_class v0 .. v7`,
    /// `eval_class_opp v0 .. v7`, `bonus v0 .. v3` and `plus v0 .. v3`.
    pub fn parse(text: &str) -> Result<Weights, ParseError> {
        let (mut level, mut class, mut eval_class, mut eval_opp) = (None, None, None, None);
        let (mut n_level, mut n_class, mut n_eval, mut n_opp) = (0, 0, 0, 0);
        let (mut bonus, mut n_bonus) = (None, 0);
        let (mut plus, mut n_plus) = (None, 0);
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            match words.next() {
                None => {}
                Some("level") => {
                    level = Some(values::<LEVELS>(words, n + 1, "level")?);
                    n_level += 1;
                }
                Some("class") => {
                    class = Some(values::<CLASSES>(words, n + 1, "class")?);
                    n_class += 1;
                }
                Some("eval_class") => {
                    eval_class = Some(values::<CLASSES>(words, n + 1, "eval_class")?);
                    n_eval += 1;
                }
                Some("eval_class_opp") => {
                    eval_opp = Some(values::<CLASSES>(words, n + 1, "eval_class_opp")?);
                    n_opp += 1;
                }
                Some("bonus") => {
                    bonus = Some(values::<BONUSES>(words, n + 1, "bonus")?);
                    n_bonus += 1;
                }
                Some("plus") => {
                    plus = Some(values::<PLUSES>(words, n + 1, "plus")?);
                    n_plus += 1;
                }
                Some(key) => {
                    return Err(ParseError::UnknownKey {
                        line: n + 1,
                        key: key.to_string(),
                        expected:
                            "`level`, `class`, `eval_class`, `eval_class_opp`, `bonus` or `plus`",
                    })
                }
            }
        }
        match (level, class) {
            (Some(level), Some(class))
                if n_level == 1
                    && n_class == 1
                    && n_eval <= 1
                    && n_opp <= 1
                    && n_bonus <= 1
                    && n_plus <= 1 =>
            {
                let eval_class = eval_class.unwrap_or([0; CLASSES]);
                Ok(Weights {
                    level,
                    class,
                    eval_class,
                    eval_class_opp: eval_opp.unwrap_or(eval_class),
                    bonus: bonus.unwrap_or(DEFAULT_BONUS),
                    plus: plus.unwrap_or([0; PLUSES]),
                })
            }
            _ if n_level != 1 => Err(ParseError::Count("level")),
            _ if n_class != 1 => Err(ParseError::Count("class")),
            _ if n_eval > 1 => Err(ParseError::Count("eval_class")),
            _ if n_opp > 1 => Err(ParseError::Count("eval_class_opp")),
            _ if n_bonus > 1 => Err(ParseError::Count("bonus")),
            _ => Err(ParseError::Count("plus")),
        }
    }

    /// The file format (the numbers only; the comments of `weights.txt` are the tuner's to
    /// write). `parse(w.to_text()) == w`.
    pub fn to_text(&self) -> String {
        let join = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(" ");
        format!(
            "level {}\nclass {}\neval_class {}\neval_class_opp {}\nbonus {}\nplus {}\n",
            join(&self.level),
            join(&self.class),
            join(&self.eval_class),
            join(&self.eval_class_opp),
            join(&self.bonus),
            join(&self.plus)
        )
    }

    /// The weights the engine evaluates with: `weights.txt` as built.
    pub fn built() -> &'static Weights {
        static BUILT: OnceLock<Weights> = OnceLock::new();
        BUILT.get_or_init(|| Weights::parse(BUILT_TEXT).expect("search/weights.txt parses"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_round_trips() {
        let w = Weights {
            level: [0, 3, -2, 4, 10, 12, 40, 45, 55, 200, 1000],
            class: [0, 1, 0, 7, 150, 300, 400, 2000],
            eval_class: [0, 5, -3, 0, 0, 0, 0, 0],
            eval_class_opp: [0, 2, 9, 0, 1, 0, 0, 0],
            bonus: [2900, 1400, 700, 810],
            plus: [7, -4, 30, 11],
        };
        assert_eq!(Weights::parse(&w.to_text()), Ok(w));
        assert_eq!(
            Weights::parse(&Weights::built().to_text()).as_ref(),
            Ok(Weights::built())
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_line() {
        assert_eq!(
            Weights::parse("level 0 1 2\nclass 0 0 0 0 0 0 0 0"),
            Err(ParseError::BadValues {
                line: 1,
                key: "level",
                expected: LEVELS
            })
        );
        assert_eq!(
            Weights::parse("# c\nlevel 0 1 2 3 4 5 6 7 8 9 x\n"),
            Err(ParseError::BadValues {
                line: 2,
                key: "level",
                expected: LEVELS
            })
        );
        assert!(matches!(
            Weights::parse("levels 1"),
            Err(ParseError::UnknownKey { line: 1, .. })
        ));
        assert_eq!(
            Weights::parse("level 0 1 2 4 10 12 40 45 50 200 1000\n"),
            Err(ParseError::Count("class"))
        );
        let one = "level 0 1 2 4 10 12 40 45 50 200 1000\nclass 0 0 0 0 150 300 400 2000\n";
        assert_eq!(Weights::parse(one).map(|w| w.eval_class), Ok([0; CLASSES]));
        let twice = format!("{one}eval_class 0 0 0 0 0 0 0 0\neval_class 0 0 0 0 0 0 0 0\n");
        assert_eq!(Weights::parse(&twice), Err(ParseError::Count("eval_class")));
        let twice =
            format!("{one}eval_class_opp 0 0 0 0 0 0 0 0\neval_class_opp 0 0 0 0 0 0 0 0\n");
        assert_eq!(
            Weights::parse(&twice),
            Err(ParseError::Count("eval_class_opp"))
        );
        // Without the opponent's table, the side to move's serves both (symmetric terms).
        let mine = format!("{one}eval_class 0 1 2 3 4 0 0 0\n");
        let w = Weights::parse(&mine).unwrap();
        assert_eq!(w.eval_class_opp, [0, 1, 2, 3, 4, 0, 0, 0]);
        assert_eq!(w.eval_class_opp, w.eval_class);
        // Without a `bonus` line, the terms the evaluation had as constants; a second one is
        // refused.
        assert_eq!(w.bonus, DEFAULT_BONUS);
        let twice = format!("{one}bonus 1 2 3 4\nbonus 1 2 3 4\n");
        assert_eq!(Weights::parse(&twice), Err(ParseError::Count("bonus")));
        // Without a `plus` line, no cross-line terms; a second one is refused.
        assert_eq!(w.plus, [0; PLUSES]);
        let twice = format!("{one}plus 1 2 3 4\nplus 1 2 3 4\n");
        assert_eq!(Weights::parse(&twice), Err(ParseError::Count("plus")));
        assert_eq!(
            Weights::parse(&format!("{one}bonus 1 2 3\n")),
            Err(ParseError::BadValues {
                line: 3,
                key: "bonus",
                expected: BONUSES
            })
        );
    }
}
