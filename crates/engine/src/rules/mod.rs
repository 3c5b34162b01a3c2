//! What a game is: its board size, how many in a row win, and which rule variant decides whether
//! a line counts. One [`Board`](crate::Board) plays every game described here; the variant logic
//! lives in [`caro`] and the tic-tac-toe / m,n,k constructors in [`tictactoe`].
//!
//! This module never touches stones: it only describes and validates.

pub mod caro;
pub mod tictactoe;

use std::fmt;
use std::str::FromStr;

/// Smallest side of a Caro board.
pub const MIN_CARO_SIZE: u8 = 5;
/// Largest side of any board. Caro is commonly played up to 20x20; we allow more.
pub const MAX_SIZE: u8 = 32;
/// Smallest side of an m,n,k board (tic-tac-toe is 3x3).
pub const MIN_SIZE: u8 = 3;

/// Which game is played on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameKind {
    /// Tic-tac-toe and the generalised m,n,k game: k or more in a row wins.
    TicTacToe,
    /// Caro (gomoku): five in a row under one of the [`Rule`] variants.
    Caro,
}

impl GameKind {
    /// The wire name (`"tictactoe"` or `"caro"`).
    pub fn as_str(self) -> &'static str {
        match self {
            GameKind::TicTacToe => "tictactoe",
            GameKind::Caro => "caro",
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GameKind {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tictactoe" => Ok(GameKind::TicTacToe),
            "caro" => Ok(GameKind::Caro),
            other => Err(RulesError::UnknownGame(other.to_string())),
        }
    }
}

/// When a run of `win_length` or more stones wins.
///
/// Gomocup's `INFO rule` bitmask maps as: `0` freestyle, `1` exact five, `8` the Gomocup
/// referee's caro ([`Rule::CaroGomocup`]: a five blocked at both ends does not win, an overline
/// always does) and `9` (= 8 + exact five) the Vietnamese caro rule ([`Rule::Caro`]). See
/// `docs/rules.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `win_length` or more in a row wins.
    Freestyle,
    /// Exactly `win_length` wins; an overline does not.
    ExactFive,
    /// Exactly `win_length`, and not blocked at both ends by opponent stones (an edge is no block).
    Caro,
    /// `win_length` or more, and not blocked at both ends by opponent stones.
    CaroOverline,
    /// Gomocup's `INFO rule 8` as its referee scores it: exactly `win_length` wins unless
    /// blocked at both ends by opponent stones; a longer run always wins, blocked or not.
    CaroGomocup,
}

impl Rule {
    /// Every variant, in wire-name order.
    pub const ALL: [Rule; 5] = [
        Rule::Freestyle,
        Rule::ExactFive,
        Rule::Caro,
        Rule::CaroOverline,
        Rule::CaroGomocup,
    ];

    /// The wire name: `freestyle`, `exact_five`, `caro`, `caro_overline`, `caro_gomocup`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Freestyle => "freestyle",
            Rule::ExactFive => "exact_five",
            Rule::Caro => "caro",
            Rule::CaroOverline => "caro_overline",
            Rule::CaroGomocup => "caro_gomocup",
        }
    }

    /// Whether a run longer than the win length can win.
    pub fn overline_wins(self) -> bool {
        matches!(
            self,
            Rule::Freestyle | Rule::CaroOverline | Rule::CaroGomocup
        )
    }

    /// Whether a run blocked at both ends by opponent stones can be denied the win (under
    /// [`Rule::CaroGomocup`] only a run of exactly the win length is).
    pub fn blocked_ends_matter(self) -> bool {
        matches!(self, Rule::Caro | Rule::CaroOverline | Rule::CaroGomocup)
    }

    /// The Gomocup `INFO rule` value for this variant. `caro_overline` has no code of its own:
    /// it is sent as 8, the nearest (an engine told 8 plays `caro_gomocup`, which differs from
    /// it only in that an overline blocked at both ends wins).
    pub fn gomocup_code(self) -> u32 {
        match self {
            Rule::Freestyle => 0,
            Rule::ExactFive => 1,
            Rule::CaroOverline | Rule::CaroGomocup => 8,
            Rule::Caro => 9,
        }
    }

    /// The variant for a Gomocup `INFO rule` bitmask; `None` for what we do not play
    /// (renju, bit 4). Bit 2 (continuous game) does not change the win condition and is ignored.
    pub fn from_gomocup(code: u32) -> Option<Rule> {
        if code & 4 != 0 {
            return None;
        }
        match code & !2 {
            0 => Some(Rule::Freestyle),
            1 => Some(Rule::ExactFive),
            8 => Some(Rule::CaroGomocup),
            9 => Some(Rule::Caro),
            _ => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Rule {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| RulesError::UnknownRule(s.to_string()))
    }
}

/// Why a game description was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// The board is smaller or larger than the game allows.
    #[error("board {width}x{height} is outside {min}x{min}..={max}x{max}")]
    BoardSize {
        /// Requested width.
        width: u8,
        /// Requested height.
        height: u8,
        /// Smallest side allowed.
        min: u8,
        /// Largest side allowed.
        max: u8,
    },
    /// The win length cannot fit on the board, or is below 3.
    #[error("win length {0} does not fit the board")]
    WinLength(u8),
    /// Not a game name we know.
    #[error("unknown game {0:?} (expected \"caro\" or \"tictactoe\")")]
    UnknownGame(String),
    /// Not a rule variant we know.
    #[error(
        "unknown rule {0:?} (expected freestyle, exact_five, caro, caro_overline or caro_gomocup)"
    )]
    UnknownRule(String),
}

/// A complete game description: what is played, on what board, under which rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    kind: GameKind,
    width: u8,
    height: u8,
    win_length: u8,
    rule: Rule,
}

impl Rules {
    /// Caro on a `width` x `height` board (5x5 ..= 32x32), five in a row under `rule`.
    pub fn caro(width: u8, height: u8, rule: Rule) -> Result<Rules, RulesError> {
        check_size(width, height, MIN_CARO_SIZE)?;
        Ok(Rules {
            kind: GameKind::Caro,
            width,
            height,
            win_length: 5,
            rule,
        })
    }

    /// The default Caro game: 15x15 freestyle.
    pub fn caro_default() -> Rules {
        Rules::caro(15, 15, Rule::Freestyle).expect("15x15 is a valid Caro board")
    }

    /// Tic-tac-toe: 3x3, three in a row.
    pub fn tictactoe() -> Rules {
        Rules::mnk(3, 3, 3).expect("3,3,3 is a valid m,n,k game")
    }

    /// The m,n,k game: an `m` x `n` board, `k` or more in a row wins.
    pub fn mnk(m: u8, n: u8, k: u8) -> Result<Rules, RulesError> {
        check_size(m, n, MIN_SIZE)?;
        if k < 3 || k > m.max(n) {
            return Err(RulesError::WinLength(k));
        }
        Ok(Rules {
            kind: GameKind::TicTacToe,
            width: m,
            height: n,
            win_length: k,
            rule: Rule::Freestyle,
        })
    }

    /// Which game this is.
    pub fn kind(&self) -> GameKind {
        self.kind
    }
    /// Board width (columns).
    pub fn width(&self) -> u8 {
        self.width
    }
    /// Board height (rows).
    pub fn height(&self) -> u8 {
        self.height
    }
    /// How many in a row win.
    pub fn win_length(&self) -> u8 {
        self.win_length
    }
    /// The rule variant (always [`Rule::Freestyle`] for tic-tac-toe).
    pub fn rule(&self) -> Rule {
        self.rule
    }
    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }
}

fn check_size(width: u8, height: u8, min: u8) -> Result<(), RulesError> {
    if (min..=MAX_SIZE).contains(&width) && (min..=MAX_SIZE).contains(&height) {
        Ok(())
    } else {
        Err(RulesError::BoardSize {
            width,
            height,
            min,
            max: MAX_SIZE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gomocup_codes_round_trip() {
        for rule in Rule::ALL {
            // `caro_overline` has no code of its own: 8 is Gomocup's referee rule.
            let back = match rule {
                Rule::CaroOverline => Rule::CaroGomocup,
                r => r,
            };
            assert_eq!(Rule::from_gomocup(rule.gomocup_code()), Some(back));
            // The continuous-game bit does not change the win condition.
            assert_eq!(Rule::from_gomocup(rule.gomocup_code() | 2), Some(back));
        }
        assert_eq!(Rule::from_gomocup(8), Some(Rule::CaroGomocup));
        assert_eq!(Rule::from_gomocup(4), None, "renju is not supported");
    }

    #[test]
    fn names_round_trip() {
        for rule in Rule::ALL {
            assert_eq!(rule.as_str().parse::<Rule>(), Ok(rule));
        }
        assert!("renju".parse::<Rule>().is_err());
        assert_eq!("caro".parse::<GameKind>(), Ok(GameKind::Caro));
    }

    #[test]
    fn sizes_are_checked() {
        assert!(Rules::caro(4, 15, Rule::Caro).is_err());
        assert!(Rules::caro(33, 15, Rule::Caro).is_err());
        assert!(Rules::caro(25, 25, Rule::Caro).is_ok());
        assert!(Rules::mnk(3, 3, 4).is_err());
        assert!(Rules::mnk(7, 6, 4).is_ok());
    }
}
