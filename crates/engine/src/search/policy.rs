//! The learnt move ordering of quiet moves: a score per candidate cell from what a stone there
//! would make for each player (the cell's four line levels, in any order of directions) and
//! where the cell lies from the last two stones. Fitted to the quiet moves Rapfi chose in our
//! recorded games against it (the `policy` example; docs/engine.md, "A move ordering learnt
//! from Rapfi's moves"), so that the moves a stronger engine plays come early in the ordering,
//! where move-count pruning and late move reductions leave them alone.
//!
//! A score is `me[code(mine)] + opp[code(theirs)] + last[bucket(from the opponent's last
//! stone)] + own[bucket(from our last stone)]` in the units of the ordering (the cell values).
//! The numbers live in `policy.txt` beside this file, built in with `include_str!` (the engine
//! reads no file); [`Policy::to_text`] and [`Policy::parse`] are the format's two directions.
//! The search reads it through [`OrderTable`], expanded once per weights to the combination
//! indices the position keeps.

use std::sync::{Arc, OnceLock};

use super::pattern::Level;
use super::position::combo_levels;
use super::weights::{values, ParseError, LEVELS};

/// Number of distinct multisets of four levels: a cell's lines in any order of directions
/// (`C(LEVELS + 3, 4)`).
pub const CODES: usize = 1001;

/// Number of place buckets ([`bucket`]).
pub const BUCKETS: usize = 6;

/// How far (in cells, either way) the place terms reach.
pub const REACH: i32 = 4;

/// Side of the square of offsets the place terms cover.
const SIDE: usize = 2 * REACH as usize + 1;

/// The policy file as built into the engine.
pub const BUILT_TEXT: &str = include_str!("policy.txt");

/// The multiset index of four levels: the same for every order of the four.
pub fn code(levels: [Level; 4]) -> usize {
    let mut l = levels.map(usize::from);
    l.sort_unstable_by(|a, b| b.cmp(a));
    // Multisets in lexicographic order of their sorted (descending) levels: count those before.
    let below = |n: usize, k: usize| -> usize {
        // Multisets of size k over n values: C(n + k - 1, k).
        (0..k).fold(1, |acc, i| acc * (n + i) / (i + 1))
    };
    let [a, b, c, d] = l;
    below(a, 4) + below(b, 3) + below(c, 2) + below(d, 1)
}

/// The place bucket of a cell `(dx, dy)` away from a stone: on one of the stone's four lines
/// within [`REACH`], the distance (1 to 4); a knight's move away, 5; anything else 0.
pub fn bucket(dx: i32, dy: i32) -> usize {
    let (ax, ay) = (dx.abs(), dy.abs());
    let far = ax.max(ay);
    if (ax == 0 || ay == 0 || ax == ay) && far <= REACH {
        far as usize
    } else if far == 2 && ax + ay == 3 {
        5
    } else {
        0
    }
}

/// The learnt ordering's numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Per [`code`] of the side to move's levels at the cell.
    pub me: Vec<i32>,
    /// Per [`code`] of the opponent's levels at the cell.
    pub opp: Vec<i32>,
    /// Per [`bucket`] of the cell from the opponent's last stone.
    pub last: [i32; BUCKETS],
    /// Per [`bucket`] of the cell from the side to move's last stone.
    pub own: [i32; BUCKETS],
}

impl Policy {
    /// All zeros: every quiet move alike.
    pub fn zero() -> Policy {
        Policy {
            me: vec![0; CODES],
            opp: vec![0; CODES],
            last: [0; BUCKETS],
            own: [0; BUCKETS],
        }
    }

    /// Parses the format: `#` comments, blank lines, and exactly one line each of
    /// `me v0 .. v1000`, `opp v0 .. v1000`, `last v0 .. v5` and `own v0 .. v5`.
    pub fn parse(text: &str) -> Result<Policy, ParseError> {
        let (mut me, mut opp, mut last, mut own) = (None, None, None, None);
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            let Some(key) = words.next() else { continue };
            let (name, again) = match key {
                "me" => (
                    "me",
                    me.replace(values::<CODES>(words, n + 1, "me")?).is_some(),
                ),
                "opp" => (
                    "opp",
                    opp.replace(values::<CODES>(words, n + 1, "opp")?).is_some(),
                ),
                "last" => (
                    "last",
                    last.replace(values::<BUCKETS>(words, n + 1, "last")?)
                        .is_some(),
                ),
                "own" => (
                    "own",
                    own.replace(values::<BUCKETS>(words, n + 1, "own")?)
                        .is_some(),
                ),
                _ => {
                    return Err(ParseError::UnknownKey {
                        line: n + 1,
                        key: key.to_string(),
                        expected: "`me`, `opp`, `last` or `own`",
                    })
                }
            };
            if again {
                return Err(ParseError::Count(name));
            }
        }
        Ok(Policy {
            me: me.ok_or(ParseError::Count("me"))?.to_vec(),
            opp: opp.ok_or(ParseError::Count("opp"))?.to_vec(),
            last: last.ok_or(ParseError::Count("last"))?,
            own: own.ok_or(ParseError::Count("own"))?,
        })
    }

    /// The file format (numbers only). `parse(p.to_text()) == p`.
    pub fn to_text(&self) -> String {
        let join = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(" ");
        format!(
            "me {}\nopp {}\nlast {}\nown {}\n",
            join(&self.me),
            join(&self.opp),
            join(&self.last),
            join(&self.own)
        )
    }

    /// The policy the engine orders with: `policy.txt` as built.
    pub fn built() -> &'static Policy {
        static BUILT: OnceLock<Policy> = OnceLock::new();
        BUILT.get_or_init(|| Policy::parse(BUILT_TEXT).expect("search/policy.txt parses"))
    }
}

/// A [`Policy`] laid out for the search: per combination index of the position (the four
/// levels as digits in base [`LEVELS`], direction by direction) the side to move's and the
/// opponent's terms, and per offset from a stone within [`REACH`] its place terms less the far
/// one (which is folded into the side to move's terms: cells out of reach add nothing).
#[derive(Clone, Debug)]
pub struct OrderTable {
    by_combo: Box<[[i32; 2]]>,
    near: [[i32; SIDE * SIDE]; 2],
}

impl OrderTable {
    /// The table of `policy`.
    pub fn new(policy: &Policy) -> OrderTable {
        let far = policy.last[0] + policy.own[0];
        let by_combo = (0..LEVELS.pow(4))
            .map(|n| {
                let c = code(combo_levels(n));
                [policy.me[c] + far, policy.opp[c]]
            })
            .collect();
        let mut near = [[0; SIDE * SIDE]; 2];
        for (t, terms) in [&policy.last, &policy.own].into_iter().enumerate() {
            for dx in -REACH..=REACH {
                for dy in -REACH..=REACH {
                    let at = ((dy + REACH) as usize) * SIDE + (dx + REACH) as usize;
                    near[t][at] = terms[bucket(dx, dy)] - terms[0];
                }
            }
        }
        OrderTable { by_combo, near }
    }

    /// The table of the built policy ([`Policy::built`]), made on first use.
    pub fn built() -> Arc<OrderTable> {
        static BUILT: OnceLock<Arc<OrderTable>> = OnceLock::new();
        BUILT
            .get_or_init(|| Arc::new(OrderTable::new(Policy::built())))
            .clone()
    }

    /// The side to move's (`[0]`) and the opponent's (`[1]`) terms of a cell whose levels have
    /// combination index `combo` (for the player in question).
    #[inline]
    pub fn combo(&self, combo: u16) -> &[i32; 2] {
        &self.by_combo[combo as usize]
    }

    /// The place terms by padded-index difference on a board of row length `stride` (the
    /// opponent's last stone's in `[0]`, our own's in `[1]`), for offsets `-reach..=reach`
    /// where `reach` is [`OrderTable::reach`]: cells on another row than their offset says
    /// cannot occur within that reach, as a row is longer than the board by the walls.
    pub fn by_offset(&self, stride: usize) -> Vec<[i32; 2]> {
        let reach = OrderTable::reach(stride);
        let mut out = vec![[0; 2]; 2 * reach + 1];
        for dx in -REACH..=REACH {
            for dy in -REACH..=REACH {
                let off = dy as isize * stride as isize + dx as isize;
                let at = ((dy + REACH) as usize) * SIDE + (dx + REACH) as usize;
                out[(off + reach as isize) as usize] = [self.near[0][at], self.near[1][at]];
            }
        }
        out
    }

    /// The largest padded-index difference [`OrderTable::by_offset`] covers.
    pub fn reach(stride: usize) -> usize {
        REACH as usize * stride + REACH as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_number_the_multisets() {
        let mut seen = vec![false; CODES];
        for n in 0..LEVELS.pow(4) {
            let l = [n / 1331, n / 121 % 11, n / 11 % 11, n % 11].map(|v| v as Level);
            let c = code(l);
            assert!(c < CODES, "{l:?}");
            seen[c] = true;
            let mut r = l;
            r.reverse();
            assert_eq!(code(r), c, "order of the directions");
        }
        assert!(seen.iter().all(|&s| s), "every code is some multiset");
        assert_eq!(code([0, 0, 0, 0]), 0);
        assert_eq!(code([10, 10, 10, 10]), CODES - 1);
    }

    #[test]
    fn buckets() {
        assert_eq!(bucket(0, 1), 1);
        assert_eq!(bucket(-3, 3), 3);
        assert_eq!(bucket(4, 0), 4);
        assert_eq!(bucket(5, 0), 0);
        assert_eq!(bucket(1, 2), 5);
        assert_eq!(bucket(-2, 1), 5);
        assert_eq!(bucket(0, 0), 0);
        assert_eq!(bucket(3, 1), 0);
        assert_eq!(bucket(3, 2), 0);
    }

    #[test]
    fn the_text_round_trips_and_bad_files_are_refused() {
        let mut p = Policy::zero();
        p.me[7] = 12;
        p.opp[1000] = -3;
        p.last = [1, 2, 3, 4, 5, 6];
        p.own[2] = -9;
        assert_eq!(Policy::parse(&p.to_text()), Ok(p.clone()));
        assert_eq!(
            Policy::parse(&Policy::built().to_text()).as_ref(),
            Ok(Policy::built())
        );
        let text = p.to_text();
        assert_eq!(
            Policy::parse(&text.replace("last 1 2 3 4 5 6", "last 1 2")),
            Err(ParseError::BadValues {
                line: 3,
                key: "last",
                expected: BUCKETS
            })
        );
        assert_eq!(
            Policy::parse(&format!("{text}own 0 0 0 0 0 0\n")),
            Err(ParseError::Count("own"))
        );
        assert_eq!(
            Policy::parse(&text.replace("own", "mine")),
            Err(ParseError::UnknownKey {
                line: 4,
                key: "mine".into(),
                expected: "`me`, `opp`, `last` or `own`"
            })
        );
        let no_opp: String = text
            .lines()
            .filter(|l| !l.starts_with("opp"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(Policy::parse(&no_opp), Err(ParseError::Count("opp")));
    }

    #[test]
    fn the_table_reads_the_policy() {
        let mut p = Policy::zero();
        p.me[code([6, 4, 0, 0])] = 40;
        p.opp[code([6, 4, 0, 0])] = 25;
        p.last = [-5, 9, 0, 0, 0, 0];
        p.own = [-1, 0, 3, 0, 0, 0];
        let t = OrderTable::new(&p);
        // Levels 0, 4, 0, 6 by direction: digits in base 11, the first direction highest.
        let combo = (4 * 11 * 11 + 6) as u16;
        assert_eq!(t.combo(combo), &[40 - 6, 25], "far terms folded into ours");
        let stride = 21;
        let near = t.by_offset(stride);
        let reach = OrderTable::reach(stride) as isize;
        let at = |dx: isize, dy: isize| near[(dy * stride as isize + dx + reach) as usize];
        assert_eq!(at(1, 1), [14, 1]);
        assert_eq!(at(0, -2), [5, 4]);
        assert_eq!(at(3, 1), [0, 0], "out of the terms' reach: the far value");
    }
}
