//! The pattern evaluation's weights: the value of each line [`Level`](super::pattern::Level)
//! and the extra value of each combined [`Class`](super::position::Class) of a cell (the
//! cross-line combinations: four-three, double three, open four or double four...). A cell's
//! value for a player is the sum of its four lines' level values plus its class's value; the
//! evaluation sums the cells (see [`position`](super::position)), with its own class terms and
//! a correction per combination of four levels ([`Weights::eval_combo`]).
//!
//! The numbers live in `weights.txt` beside this file, built in with `include_str!` and parsed
//! once on first use: the engine reads no file. The `texel` example (docs/engine.md, "Texel
//! tuning") fits them to self-play outcomes and writes that file; [`Weights::to_text`] and
//! [`Weights::parse`] are the format's two directions.

use std::sync::OnceLock;

use super::position::CLASSES;

/// Number of line levels ([`pattern::NONE`](super::pattern::NONE) to
/// [`pattern::F5`](super::pattern::F5)).
pub const LEVELS: usize = 10;

/// Number of combinations of four line levels regardless of direction (multisets of four of
/// the [`LEVELS`] levels): the index of [`Weights::eval_combo`].
pub const COMBOS: usize = 715;

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
    /// A correction of the evaluation per combination of a cell's four line levels (the
    /// order of the directions does not matter: [`combo_id`]), for the side to move's cells
    /// (`[0]`) and the opponent's (`[1]`, subtracted like the rest of the opponent's value).
    /// Finer than the classes: an open three with a blocked two beside it is worth more than
    /// one alone. Optional in the file, and only its non-zero entries are written (zeros).
    pub eval_combo: [[i32; 2]; COMBOS],
}

/// The sorted levels of every combination, highest first, in [`combo_id`] order.
fn combo_list() -> &'static [[u8; 4]] {
    static LIST: OnceLock<Vec<[u8; 4]>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut list = Vec::with_capacity(COMBOS);
        for a in 0..LEVELS as u8 {
            for b in 0..=a {
                for c in 0..=b {
                    for d in 0..=c {
                        list.push([a, b, c, d]);
                    }
                }
            }
        }
        assert_eq!(list.len(), COMBOS);
        list
    })
}

/// The [`COMBOS`] index of a cell's four line levels, in any order of directions.
pub fn combo_id(levels: [u8; 4]) -> usize {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let mut ids = vec![0u16; 10_000];
        for (id, l) in combo_list().iter().enumerate() {
            for perm in permutations(*l) {
                ids[key(perm)] = id as u16;
            }
        }
        ids
    });
    ids[key(levels)] as usize
}

/// The levels of combination `id`, highest first (the inverse of [`combo_id`]).
pub fn combo_levels(id: usize) -> [u8; 4] {
    combo_list()[id]
}

fn key(l: [u8; 4]) -> usize {
    l.iter().fold(0, |k, &v| k * 10 + v as usize)
}

fn permutations(l: [u8; 4]) -> impl Iterator<Item = [u8; 4]> {
    (0..24).map(move |mut n| {
        let mut pool = l.to_vec();
        let mut out = [0; 4];
        for (i, o) in out.iter_mut().enumerate() {
            let f = [6, 2, 1, 1][i];
            *o = pool.remove(n / f);
            n %= f;
        }
        out
    })
}

/// Why a weights file does not parse.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// A line names no known table.
    #[error(
        "line {line}: unknown key {key:?} (expected `level`, `class`, `eval_class` or `eval_class_opp`)"
    )]
    UnknownKey {
        /// 1-based line number.
        line: usize,
        /// The first word of the line.
        key: String,
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
    /// An `eval_combo` line does not give four levels from highest to lowest and two
    /// integers, or gives a combination a second time.
    #[error(
        "line {line}: `eval_combo` needs four levels 0-9 from highest to lowest, not given \
         before, then two integers"
    )]
    BadCombo {
        /// 1-based line number.
        line: usize,
    },
}

fn values<const N: usize>(
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
    /// `level v0 .. v9` and `class v0 .. v7`, at most one each of `eval_class v0 .. v7` and
    /// `eval_class_opp v0 .. v7`, and any number of `eval_combo l0 l1 l2 l3 mine theirs`
    /// (levels from highest to lowest, each combination once).
    pub fn parse(text: &str) -> Result<Weights, ParseError> {
        let (mut level, mut class, mut eval_class, mut eval_opp) = (None, None, None, None);
        let mut eval_combo = [[0; 2]; COMBOS];
        let mut combo_seen = [false; COMBOS];
        let (mut n_level, mut n_class, mut n_eval, mut n_opp) = (0, 0, 0, 0);
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
                Some("eval_combo") => {
                    let bad = ParseError::BadCombo { line: n + 1 };
                    let v = values::<6>(words, n + 1, "eval_combo").map_err(|_| bad.clone())?;
                    let l = [v[0], v[1], v[2], v[3]];
                    if l.iter().any(|&x| !(0..LEVELS as i32).contains(&x))
                        || l.windows(2).any(|p| p[0] < p[1])
                    {
                        return Err(bad);
                    }
                    let id = combo_id(l.map(|x| x as u8));
                    if std::mem::replace(&mut combo_seen[id], true) {
                        return Err(bad);
                    }
                    eval_combo[id] = [v[4], v[5]];
                }
                Some(key) => {
                    return Err(ParseError::UnknownKey {
                        line: n + 1,
                        key: key.to_string(),
                    })
                }
            }
        }
        match (level, class) {
            (Some(level), Some(class))
                if n_level == 1 && n_class == 1 && n_eval <= 1 && n_opp <= 1 =>
            {
                let eval_class = eval_class.unwrap_or([0; CLASSES]);
                Ok(Weights {
                    level,
                    class,
                    eval_class,
                    eval_class_opp: eval_opp.unwrap_or(eval_class),
                    eval_combo,
                })
            }
            _ if n_level != 1 => Err(ParseError::Count("level")),
            _ if n_class != 1 => Err(ParseError::Count("class")),
            _ if n_eval > 1 => Err(ParseError::Count("eval_class")),
            _ => Err(ParseError::Count("eval_class_opp")),
        }
    }

    /// The file format (the numbers only; the comments of `weights.txt` are the tuner's to
    /// write). `parse(w.to_text()) == w`.
    pub fn to_text(&self) -> String {
        let join = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(" ");
        let mut text = format!(
            "level {}\nclass {}\neval_class {}\neval_class_opp {}\n",
            join(&self.level),
            join(&self.class),
            join(&self.eval_class),
            join(&self.eval_class_opp)
        );
        for (id, v) in self.eval_combo.iter().enumerate() {
            if *v != [0, 0] {
                let l = combo_levels(id).map(i32::from);
                text += &format!("eval_combo {} {}\n", join(&l), join(v));
            }
        }
        text
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
            level: [0, 3, -2, 4, 10, 12, 40, 55, 200, 1000],
            class: [0, 1, 0, 7, 150, 300, 400, 2000],
            eval_class: [0, 5, -3, 0, 0, 0, 0, 0],
            eval_class_opp: [0, 2, 9, 0, 1, 0, 0, 0],
            eval_combo: [[0; 2]; COMBOS],
        };
        assert_eq!(Weights::parse(&w.to_text()), Ok(w));
        let mut w = w;
        w.eval_combo[combo_id([6, 4, 0, 0])] = [35, -7];
        w.eval_combo[combo_id([9, 9, 9, 9])] = [0, 4];
        let text = w.to_text();
        assert!(
            text.ends_with("eval_combo 6 4 0 0 35 -7\neval_combo 9 9 9 9 0 4\n"),
            "{text}"
        );
        assert_eq!(Weights::parse(&text), Ok(w));
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
            Weights::parse("# c\nlevel 0 1 2 3 4 5 6 7 8 x\n"),
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
            Weights::parse("level 0 1 2 4 10 12 40 50 200 1000\n"),
            Err(ParseError::Count("class"))
        );
        let one = "level 0 1 2 4 10 12 40 50 200 1000\nclass 0 0 0 0 150 300 400 2000\n";
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
        assert_eq!(w.eval_combo, [[0; 2]; COMBOS]);
        // Combinations: levels from highest to lowest, 0-9, each once, then two integers.
        for (line, bad) in [
            "eval_combo 4 6 0 0 1 1",
            "eval_combo 10 6 0 0 1 1",
            "eval_combo 6 4 0 0 1",
            "eval_combo 6 4 0 0 1 x",
            "eval_combo 6 4 0 0 1 1\neval_combo 6 4 0 0 2 2",
        ]
        .iter()
        .enumerate()
        {
            let text = format!("{one}{bad}\n");
            let at = 3 + bad.lines().count() - 1;
            assert_eq!(
                Weights::parse(&text),
                Err(ParseError::BadCombo { line: at }),
                "case {line}: {bad}"
            );
        }
    }

    #[test]
    fn combinations_ignore_the_order_of_directions() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..10_000usize {
            let l = [n / 1000, n / 100 % 10, n / 10 % 10, n % 10].map(|v| v as u8);
            let id = combo_id(l);
            assert!(id < COMBOS);
            let mut sorted = l;
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(combo_levels(id), sorted, "{l:?}");
            seen.insert(id);
        }
        assert_eq!(seen.len(), COMBOS);
        assert_eq!(combo_id([0, 0, 0, 0]), 0);
    }
}
