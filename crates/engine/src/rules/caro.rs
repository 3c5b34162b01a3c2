//! The Caro win condition under each [`Rule`] variant, decided from the run of stones through the
//! last move. Kept apart from the board so the evaluation and threat search can ask the same
//! question about hypothetical runs ("would five here win under this rule?").

use super::Rule;

/// What lies just beyond one end of a run of stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// An empty cell.
    Open,
    /// An opponent stone: under the caro rules two of these deny a win.
    Opponent,
    /// The edge of the board, which never blocks.
    Edge,
}

/// Whether a straight run of `len` stones, ended by `a` and `b`, wins for a game whose win
/// length is `k` under `rule`.
///
/// ```
/// use caro_engine::rules::{caro::{wins, End}, Rule};
/// assert!(wins(Rule::Freestyle, 5, 6, End::Open, End::Open));
/// assert!(!wins(Rule::ExactFive, 5, 6, End::Open, End::Open));
/// assert!(!wins(Rule::Caro, 5, 5, End::Opponent, End::Opponent));
/// assert!(wins(Rule::Caro, 5, 5, End::Opponent, End::Edge));
/// ```
pub fn wins(rule: Rule, k: u8, len: u8, a: End, b: End) -> bool {
    let long_enough = if rule.overline_wins() {
        len >= k
    } else {
        len == k
    };
    // Gomocup's referee (rule 8) denies a doubly blocked five but never an overline.
    let deniable = rule != Rule::CaroGomocup || len == k;
    let blocked =
        rule.blocked_ends_matter() && deniable && a == End::Opponent && b == End::Opponent;
    long_enough && !blocked
}

#[cfg(test)]
mod tests {
    use super::*;
    use End::*;

    #[test]
    fn the_truth_table_of_every_variant() {
        // (rule, len, ends, wins)
        let cases = [
            (Rule::Freestyle, 4, (Open, Open), false),
            (Rule::Freestyle, 5, (Opponent, Opponent), true),
            (Rule::Freestyle, 7, (Open, Open), true),
            (Rule::ExactFive, 5, (Opponent, Opponent), true),
            (Rule::ExactFive, 6, (Open, Open), false),
            (Rule::Caro, 5, (Open, Open), true),
            (Rule::Caro, 5, (Opponent, Open), true),
            (Rule::Caro, 5, (Opponent, Edge), true),
            (Rule::Caro, 5, (Edge, Edge), true),
            (Rule::Caro, 5, (Opponent, Opponent), false),
            (Rule::Caro, 6, (Open, Open), false),
            (Rule::CaroOverline, 6, (Open, Open), true),
            (Rule::CaroOverline, 6, (Opponent, Opponent), false),
            (Rule::CaroOverline, 5, (Opponent, Opponent), false),
            (Rule::CaroGomocup, 5, (Open, Open), true),
            (Rule::CaroGomocup, 5, (Opponent, Edge), true),
            (Rule::CaroGomocup, 5, (Opponent, Opponent), false),
            (Rule::CaroGomocup, 6, (Open, Open), true),
            (Rule::CaroGomocup, 6, (Opponent, Opponent), true),
            (Rule::CaroGomocup, 7, (Opponent, Opponent), true),
            (Rule::CaroGomocup, 4, (Open, Open), false),
            (Rule::CaroOverline, 5, (Edge, Opponent), true),
        ];
        for (rule, len, (a, b), expected) in cases {
            assert_eq!(
                wins(rule, 5, len, a, b),
                expected,
                "{rule} len {len} {a:?}/{b:?}"
            );
            assert_eq!(wins(rule, 5, len, b, a), expected, "ends are symmetric");
        }
    }
}
