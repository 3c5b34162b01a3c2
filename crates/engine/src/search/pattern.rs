//! Line pattern tables: what a stone on an empty cell would make along one line, under one rule
//! variant, looked up from the ten cells around it (five on each side).
//!
//! The idea is the one of Rapfi and Embryo (Gomocup engines; see `docs/engine.md`): a cell's
//! threat along a line depends only on a short window of that line, so every window is classified
//! once at startup and the search keeps, for every empty cell and direction, the window's key up
//! to date as stones come and go. A lookup then replaces a scan.
//!
//! A window key packs the ten neighbours (offsets -5..-1 then +1..+5) at two bits each:
//! 0 empty, 1 the player's stone, 2 the opponent's stone, 3 off the board. Keys are written from
//! X's point of view; [`swap`] turns one into O's point of view.
//!
//! The classification ([`Level`]) is recursive, as in Rapfi's pattern codes: a five if the
//! stone wins; a flexible (open) four if afterwards two or more cells would each complete a win
//! through it; a four if exactly one would; otherwise the best level one more stone in the
//! window reaches, lowered by one step (a three is what can become a four, and so on), with one
//! distinction more: an open three that two cells turn into an open four is a strong one.
//! "Win" is asked of [`caro::wins`] so every variant is exact: a five that would be blocked at
//! both ends is no five under caro, an overline is no five under exact five, and so a "four"
//! whose only completion is such a five is not a four.
//!
//! Cells beyond the window are unknown and treated as empty. That matters only for runs of six
//! or more (their far end can lie outside the window), so a five found here is confirmed on the
//! real board before the search believes it (see `position.rs`).

use std::sync::OnceLock;

use crate::rules::caro::{self, End};
use crate::rules::Rule;

/// Neighbours on each side of the centre kept in a window key.
pub const RADIUS: usize = 5;
/// Number of distinct window keys.
const KEYS: usize = 1 << (4 * RADIUS);

/// What a stone on the centre cell would make along one line, weakest first.
///
/// `Fn` are flexible (open) shapes that can still grow in two ways, `Bn` blocked ones.
pub type Level = u8;
/// Nothing can come of this line.
pub const NONE: Level = 0;
/// A lone stone with room on one side only.
pub const B1: Level = 1;
/// A lone stone with room.
pub const F1: Level = 2;
/// A blocked two.
pub const B2: Level = 3;
/// An open two.
pub const F2: Level = 4;
/// A blocked three (can become a four).
pub const B3: Level = 5;
/// An open three (can become an open four) in one way only: a split three, or one with
/// little room.
pub const F3: Level = 6;
/// An open three that two or more cells turn into an open four (`..xxx..`): the defender must
/// answer next to it.
pub const F3S: Level = 7;
/// A four: exactly one cell then completes a win.
pub const B4: Level = 8;
/// An open four (or a double four in one line): two cells complete a win.
pub const F4: Level = 9;
/// A winning line.
pub const F5: Level = 10;

/// The level a line has when one more stone in its window reaches `next` at best: one step
/// weaker (a four's is a three, a three's a two, and so on).
const fn below(next: Level) -> Level {
    match next {
        F4 => F3,
        B4 => B3,
        F3 | F3S => F2,
        B3 => B2,
        F2 => F1,
        B2 => B1,
        _ => NONE,
    }
}

/// Swaps the roles of the two players in a window key.
#[inline]
pub fn swap(key: u32) -> u32 {
    // Per two-bit field: 01 <-> 10, while 00 and 11 stay.
    let lo = key & 0x5_5555;
    let hi = key & 0xA_AAAA;
    let both = lo & (hi >> 1);
    let both = both | (both << 1);
    ((lo << 1) | (hi >> 1)) & !both | both
}

/// The bit offset of neighbour `offset` (`-5..=-1`, `1..=5`) in a window key.
#[inline]
pub const fn shift(offset: isize) -> u32 {
    let slot = if offset < 0 {
        offset + RADIUS as isize
    } else {
        offset + RADIUS as isize - 1
    };
    2 * slot as u32
}

/// Number of distinct half-windows that can occur on a board: five cells read outwards from
/// the centre, where past the first wall cell everything is wall (3^5 + 3^4 + ... + 1).
const HALVES: usize = 364;

/// A classification of every window key for one rule and win length.
///
/// Stored compactly: each half of the key (the five cells on one side) is first mapped to one of
/// the `HALVES` shapes that can occur, so the table has 364 x 364 entries (265 KB with both
/// players' levels, which stays in the L2 cache) instead of 2^20.
pub struct Table {
    half_lo: Box<[u16; 1024]>,
    half_hi: Box<[u16; 1024]>,
    /// Per pair of halves, the level for the player whose stones are `1` (low byte) and for
    /// the other player (high byte): one lookup serves both sides.
    pairs: Box<[u16]>,
}

impl Table {
    /// The level of the centre for the player whose stones are `1` in `key`.
    #[inline]
    pub fn level(&self, key: u32) -> Level {
        self.pair(key) as Level
    }

    /// The levels of the centre for both players: the one whose stones are `1` in `key` in the
    /// low byte, the one whose stones are `2` in the high byte (`level(swap(key))`).
    #[inline]
    pub fn pair(&self, key: u32) -> u16 {
        let lo = self.half_lo[(key & 0x3FF) as usize] as usize;
        let hi = self.half_hi[((key >> 10) & 0x3FF) as usize] as usize;
        debug_assert!(lo < HALVES && hi < HALVES && self.pairs.len() == HALVES * HALVES);
        // SAFETY: the half tables hold indices below HALVES, and `pairs` has HALVES^2 entries.
        unsafe { *self.pairs.get_unchecked(lo * HALVES + hi) }
    }

    fn build(rule: Rule, k: u8) -> Table {
        const UNKNOWN: u8 = 0xFF;
        // Half keys as stored: the low half holds offsets -5..-1 (offset -1 in the top two
        // bits), the high half +1..+5 (offset +1 in the low two bits). Read outwards from the
        // centre, a valid half has no non-wall cell after a wall.
        let outward = |half: u32, low: bool, i: usize| -> u32 {
            let slot = if low { 4 - i } else { i };
            (half >> (2 * slot)) & 3
        };
        let valid = |half: u32, low: bool| -> bool {
            let mut wall = false;
            for i in 0..5 {
                let v = outward(half, low, i);
                if wall && v != 3 {
                    return false;
                }
                wall |= v == 3;
            }
            true
        };
        // The same numbering for both halves, by their outward reading; invalid halves (never
        // on a board) share index 0.
        let mut half_lo = Box::new([0u16; 1024]);
        let mut half_hi = Box::new([0u16; 1024]);
        let mut reps = Vec::new(); // valid halves in the low layout
        for h in 0..1024u32 {
            if valid(h, true) {
                half_lo[h as usize] = reps.len() as u16;
                reps.push(h);
            }
        }
        assert_eq!(reps.len(), HALVES);
        for h in 0..1024u32 {
            if valid(h, false) {
                let mut as_low = 0;
                for i in 0..5 {
                    as_low |= outward(h, false, i) << (2 * (4 - i));
                }
                half_hi[h as usize] = half_lo[as_low as usize];
            }
        }
        let mut memo = vec![UNKNOWN; KEYS].into_boxed_slice();
        let mut levels = vec![NONE; HALVES * HALVES].into_boxed_slice();
        for (a, &lo) in reps.iter().enumerate() {
            for (b, &hi_as_low) in reps.iter().enumerate() {
                // Turn the canonical (low layout) half back into the high layout.
                let mut hi = 0;
                for i in 0..5 {
                    hi |= outward(hi_as_low, true, i) << (2 * i);
                }
                let key = lo | (hi << 10);
                levels[a * HALVES + b] = classify(key, rule, k, &mut memo);
            }
        }
        // The other player's view swaps the stones of each half, which maps a half to another.
        let swapped: Vec<usize> = reps
            .iter()
            .map(|&h| half_lo[swap(h) as usize] as usize)
            .collect();
        let pairs = (0..HALVES * HALVES)
            .map(|n| {
                let (a, b) = (n / HALVES, n % HALVES);
                levels[n] as u16 | (levels[swapped[a] * HALVES + swapped[b]] as u16) << 8
            })
            .collect();
        Table {
            half_lo,
            half_hi,
            pairs,
        }
    }
}

/// The table for `rule` and win length `k`, built on first use (a fraction of a second) and
/// shared by every search afterwards.
pub fn table(rule: Rule, k: u8) -> &'static Table {
    // Win lengths 3..=6 are classified by a radius-5 window. Longer ones get the k = 6 table:
    // its fives are then only hints (every win is confirmed on the stones), see docs/engine.md.
    static TABLES: [[OnceLock<Table>; 4]; Rule::ALL.len()] =
        [const { [const { OnceLock::new() }; 4] }; Rule::ALL.len()];
    let r = Rule::ALL.iter().position(|&x| x == rule).unwrap_or(0);
    let slot = (k.clamp(3, 6) - 3) as usize;
    TABLES[r][slot].get_or_init(|| Table::build(rule, k.clamp(3, 6)))
}

/// The ten neighbours of a key, with the centre (index 5) set to the player.
fn unpack(key: u32) -> [u8; 2 * RADIUS + 1] {
    let mut line = [0u8; 2 * RADIUS + 1];
    for (i, cell) in line.iter_mut().enumerate() {
        let off = i as isize - RADIUS as isize;
        *cell = if off == 0 {
            1
        } else {
            ((key >> shift(off)) & 3) as u8
        };
    }
    line
}

/// Whether the run of the player's stones through the centre wins.
fn centre_wins(line: &[u8; 2 * RADIUS + 1], rule: Rule, k: u8) -> bool {
    let c = RADIUS;
    let mut lo = c;
    while lo > 0 && line[lo - 1] == 1 {
        lo -= 1;
    }
    let mut hi = c;
    while hi < 2 * RADIUS && line[hi + 1] == 1 {
        hi += 1;
    }
    let end = |i: Option<usize>| match i.map(|i| line[i]) {
        Some(2) => End::Opponent,
        Some(3) => End::Edge,
        _ => End::Open,
    };
    let a = end(lo.checked_sub(1));
    let b = end((hi < 2 * RADIUS).then_some(hi + 1));
    caro::wins(rule, k, (hi - lo + 1) as u8, a, b)
}

#[allow(clippy::needless_range_loop)] // indices are line offsets, not just positions
fn classify(key: u32, rule: Rule, k: u8, memo: &mut [Level]) -> Level {
    if memo[key as usize] != 0xFF {
        return memo[key as usize];
    }
    let mut line = unpack(key);
    let level = if centre_wins(&line, rule, k) {
        F5
    } else {
        // Cells that complete a win through the centre (a win always passes within k-1 cells).
        let reach = (k as usize - 1).min(RADIUS);
        let mut wins = 0;
        for i in RADIUS - reach..=RADIUS + reach {
            if i != RADIUS && line[i] == 0 {
                line[i] = 1;
                wins += centre_wins(&line, rule, k) as u32;
                line[i] = 0;
            }
        }
        match wins {
            0 => {
                let (mut best, mut open_fours) = (NONE, 0);
                for i in RADIUS - reach..=RADIUS + reach {
                    if i != RADIUS && line[i] == 0 {
                        let off = i as isize - RADIUS as isize;
                        let next = classify(key | (1 << shift(off)), rule, k, memo);
                        open_fours += (next == F4) as u32;
                        best = best.max(below(next));
                    }
                }
                if open_fours >= 2 {
                    F3S
                } else {
                    best
                }
            }
            1 => B4,
            // Under the caro rules one stone can stop two completions: on one of them, it
            // leaves the other's five blocked at both ends (`. x x x x . o`: a stone on the left
            // square, and the right one makes a five between two opponent stones). Such a four
            // is a four, not an open four, and what leads to it no open three.
            _ if rule.blocked_ends_matter() && one_stone_stops(&mut line, rule, k, reach) => B4,
            _ => F4,
        }
    };
    memo[key as usize] = level;
    level
}

/// Whether one opponent stone on an empty cell of the window leaves the centre's stones no cell
/// that completes a win through the centre.
fn one_stone_stops(line: &mut [u8; 2 * RADIUS + 1], rule: Rule, k: u8, reach: usize) -> bool {
    (0..line.len()).any(|j| {
        if j == RADIUS || line[j] != 0 {
            return false;
        }
        line[j] = 2;
        let mut wins = 0;
        for i in RADIUS - reach..=RADIUS + reach {
            if i != RADIUS && line[i] == 0 {
                line[i] = 1;
                wins += centre_wins(line, rule, k) as u32;
                line[i] = 0;
            }
        }
        line[j] = 0;
        wins == 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a key from a picture like `"..xx_x..."`, centre marked `_`: `x` the player,
    /// `o` the opponent, `#` off the board, `.` empty.
    fn key(picture: &str) -> u32 {
        let centre = picture.find('_').unwrap();
        let mut key = 0;
        for (i, ch) in picture.chars().enumerate() {
            let off = i as isize - centre as isize;
            if off == 0 || off.abs() > RADIUS as isize {
                continue;
            }
            let v = match ch {
                'x' => 1,
                'o' => 2,
                '#' => 3,
                _ => 0,
            };
            key |= v << shift(off);
        }
        // Cells the picture does not reach are empty.
        key
    }

    #[test]
    fn levels_under_freestyle() {
        let t = table(Rule::Freestyle, 5);
        assert_eq!(t.level(key(".....xx_xx.....")), F5);
        assert_eq!(t.level(key("....xxxx_x.....")), F5, "overline wins");
        assert_eq!(t.level(key("......xx_x.....")), F4);
        assert_eq!(t.level(key(".....oxx_x.....")), B4);
        assert_eq!(t.level(key("....x._xx......")), B4, "split four");
        assert_eq!(t.level(key("......x._x.....")), F3, "split three");
        assert_eq!(
            t.level(key("......x_x......")),
            F3S,
            "two ways to an open four"
        );
        assert_eq!(t.level(key(".....x_x.......")), F3S);
        assert_eq!(t.level(key("###.x_x.....")), F3, "one way: the edge");
        assert_eq!(t.level(key("....o..x_x.....")), F3S, "room enough");
        assert_eq!(
            t.level(key("......o.x_x....")),
            F3,
            "one way: o.xxx grows to the right"
        );
        assert_eq!(t.level(key("......xx_.x....")), B4);
        assert_eq!(t.level(key("......ox_x.....")), B3);
        assert_eq!(t.level(key("......._x......")), F2);
        assert_eq!(t.level(key("......o_xo.....")), NONE);
    }

    #[test]
    fn the_variants_change_what_a_four_is() {
        // o x x x _ . o : the completion square makes a five blocked at both ends.
        let blocked = key("...oxxx_.o.....");
        assert_eq!(table(Rule::Freestyle, 5).level(blocked), B4);
        assert_eq!(table(Rule::Caro, 5).level(blocked), NONE);
        assert_eq!(table(Rule::CaroOverline, 5).level(blocked), NONE);
        // x . x x _ x: filling the gap makes six, which only freestyle counts.
        let six = key("...x.xx_x......");
        assert_eq!(table(Rule::Freestyle, 5).level(six), F4);
        assert_eq!(table(Rule::ExactFive, 5).level(six), B4);
        assert_ne!(table(Rule::ExactFive, 5).level(key("....xxxx_x.....")), F5);
        assert_eq!(table(Rule::Caro, 5).level(key("....oxx_xxo....")), NONE);
        assert_eq!(
            table(Rule::Caro, 5).level(key("..###xx_xxo....")),
            F5,
            "an edge is no block"
        );
        // . x x x _ . o : two completions, but a stone on the left one leaves the right one's
        // five blocked at both ends. Under caro a four (one stone stops it), and what makes it
        // a blocked three: the caro double three (docs/engine.md).
        let weak = key("....xxx_.o.....");
        for rule in [Rule::Caro, Rule::CaroOverline, Rule::CaroGomocup] {
            assert_eq!(table(rule, 5).level(weak), B4, "{rule}");
            assert_eq!(table(rule, 5).level(key(".....xx_.o.....")), B3, "{rule}");
            assert_eq!(table(rule, 5).level(key("....xxx_..o....")), F4, "{rule}");
        }
        assert_eq!(table(Rule::Freestyle, 5).level(weak), F4);
        assert_eq!(table(Rule::Freestyle, 5).level(key(".....xx_.o.....")), F3);
    }

    /// The second byte of a pair is the other player's view: the level of the swapped key.
    #[test]
    fn pairs_hold_both_views() {
        let t = table(Rule::Caro, 5);
        let mut seed = 0x2_4681u32;
        for _ in 0..20_000 {
            // Random keys without walls (a wall mid-window never occurs on a board).
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let r = seed >> 8;
            let k = r & 0xA_AAAA | (r & 0x5_5555 & !((r & 0xA_AAAA) >> 1));
            let pair = t.pair(k);
            assert_eq!(pair >> 8, t.pair(swap(k)) & 0xFF, "{k:05x}");
            assert_eq!(pair & 0xFF, t.pair(swap(k)) >> 8, "{k:05x}");
        }
        assert_eq!(t.pair(key(".....oo_oo.....")) >> 8, F5 as u16);
        assert_eq!(t.pair(key(".....xx_xx.....")) & 0xFF, F5 as u16);
    }

    #[test]
    fn swap_exchanges_players() {
        let k = key("..#ox_.xo#");
        let s = swap(k);
        assert_eq!(swap(s), k);
        assert_eq!((s >> shift(-1)) & 3, 2);
        assert_eq!((s >> shift(-2)) & 3, 1);
        assert_eq!((s >> shift(-3)) & 3, 3);
        assert_eq!((s >> shift(2)) & 3, 2);
        assert_eq!((s >> shift(3)) & 3, 1);
    }
}
