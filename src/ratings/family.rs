//! Rating families: which games share a rating (docs/ratings.md, "Families"). A family is a rule
//! family and a speed: `caro-blitz`, `freestyle-untimed`. Plain values: nothing here keeps
//! state.

use std::fmt;
use std::str::FromStr;

use caro_engine::{GameKind, Rule, Rules};

use crate::protocol::TimeControl;

/// The only board a rated game is played on (docs/ratings.md, "What is rated").
pub const RATED_BOARD: u8 = 15;

/// Moves each side is assumed to play when a clock's time is turned into an estimated game
/// length (lichess's 40-move estimate).
const ESTIMATED_MOVES: u64 = 40;

/// Which rule variants share a rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleFamily {
    /// `freestyle`: five or more wins.
    Freestyle,
    /// `caro`, `caro_overline`, `caro_gomocup`: the caro rules.
    Caro,
}

/// How fast a game is, from its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Speed {
    /// Estimated game time under 3 minutes.
    Bullet,
    /// Under 8 minutes.
    Blitz,
    /// Under 25 minutes.
    Rapid,
    /// 25 minutes or more.
    Classical,
    /// No clock.
    Untimed,
}

impl Speed {
    /// The speed of a time control: estimated game time = base + 40 x increment (Fischer) or
    /// 40 x the time per move.
    pub fn of(tc: &TimeControl) -> Speed {
        let ms = match *tc {
            TimeControl::None => return Speed::Untimed,
            TimeControl::Fischer {
                base_ms,
                increment_ms,
            } => base_ms.saturating_add(increment_ms.saturating_mul(ESTIMATED_MOVES)),
            TimeControl::PerMove { move_ms } => move_ms.saturating_mul(ESTIMATED_MOVES),
        };
        const MINUTE: u64 = 60_000;
        if ms < 3 * MINUTE {
            Speed::Bullet
        } else if ms < 8 * MINUTE {
            Speed::Blitz
        } else if ms < 25 * MINUTE {
            Speed::Rapid
        } else {
            Speed::Classical
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Speed::Bullet => "bullet",
            Speed::Blitz => "blitz",
            Speed::Rapid => "rapid",
            Speed::Classical => "classical",
            Speed::Untimed => "untimed",
        }
    }
}

/// A rating family: `"<rule family>-<speed>"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Family {
    /// Rules.
    pub rules: RuleFamily,
    /// Speed.
    pub speed: Speed,
}

impl Family {
    /// Every family, in the order `GET /api/ratings` lists them.
    pub fn all() -> Vec<Family> {
        let mut v = Vec::new();
        for rules in [RuleFamily::Caro, RuleFamily::Freestyle] {
            for speed in [
                Speed::Bullet,
                Speed::Blitz,
                Speed::Rapid,
                Speed::Classical,
                Speed::Untimed,
            ] {
                v.push(Family { rules, speed });
            }
        }
        v
    }

    /// The family of a game with these rules and clock, or `None` when such a game is never
    /// rated: tic-tac-toe, `exact_five`, or a board other than 15x15.
    pub fn of(rules: &Rules, tc: &TimeControl) -> Option<Family> {
        if rules.kind() != GameKind::Caro
            || rules.width() != RATED_BOARD
            || rules.height() != RATED_BOARD
        {
            return None;
        }
        let family = match rules.rule() {
            Rule::Freestyle => RuleFamily::Freestyle,
            Rule::Caro | Rule::CaroOverline | Rule::CaroGomocup => RuleFamily::Caro,
            Rule::ExactFive => return None,
        };
        Some(Family {
            rules: family,
            speed: Speed::of(tc),
        })
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules = match self.rules {
            RuleFamily::Freestyle => "freestyle",
            RuleFamily::Caro => "caro",
        };
        write!(f, "{rules}-{}", self.speed.as_str())
    }
}

impl FromStr for Family {
    type Err = ();

    fn from_str(s: &str) -> Result<Family, ()> {
        Family::all()
            .into_iter()
            .find(|f| f.to_string() == s)
            .ok_or(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fischer(base_s: u64, inc_s: u64) -> TimeControl {
        TimeControl::Fischer {
            base_ms: base_s * 1000,
            increment_ms: inc_s * 1000,
        }
    }

    #[test]
    fn speeds_follow_the_estimated_game_time() {
        assert_eq!(Speed::of(&TimeControl::None), Speed::Untimed);
        assert_eq!(Speed::of(&fischer(60, 2)), Speed::Bullet); // 140 s
        assert_eq!(Speed::of(&fischer(180, 0)), Speed::Blitz); // exactly 3 min
        assert_eq!(Speed::of(&fischer(180, 2)), Speed::Blitz); // 260 s
        assert_eq!(Speed::of(&fischer(300, 5)), Speed::Rapid); // 500 s
        assert_eq!(Speed::of(&fischer(900, 10)), Speed::Rapid); // 1300 s
        assert_eq!(Speed::of(&fischer(1500, 0)), Speed::Classical); // exactly 25 min
        assert_eq!(
            Speed::of(&TimeControl::PerMove { move_ms: 10_000 }),
            Speed::Blitz
        ); // 400 s
    }

    #[test]
    fn family_names_read_back() {
        for f in Family::all() {
            assert_eq!(f.to_string().parse::<Family>(), Ok(f));
        }
        assert_eq!(Family::all().len(), 10);
        assert!("caro".parse::<Family>().is_err());
    }
}
