//! Ratings (docs/ratings.md): a Glicko-2 rating per account and family, updated at the end of
//! every rated game (each game its own rating period, as lichess does), and the bots' fixed
//! published ratings on the same scale.
//!
//! [`Ratings`] holds every account's current ratings in memory (loaded from the store at start);
//! a room asks it whether its game is rated ([`Ratings::rated`]) and, at the end, for the new
//! ratings ([`Ratings::settle`]), which the room writes with the game's result in one store
//! event, so a finished game and its rating change are committed together. The arithmetic is
//! the `skillratings` crate's, never our own.
//!
//! This module never talks to clients and never writes to the store itself; it never changes a
//! bot's rating.

mod family;
mod leaderboard;

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::Mutex;
use serde::Serialize;
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

pub use family::{Family, RuleFamily, Speed, RATED_BOARD};
pub use leaderboard::Leader;

use crate::accounts::Accounts;
use crate::config::{BotConfig, RatingsConfig};
use crate::protocol::{Outcome, Seat};
use crate::store::{RatingRow, RowChange, SeatRecord};

/// Above this deviation a rating is shown as provisional (lichess's bound).
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// Moves each side must have played for a game to count: fewer, and it is aborted, however it
/// ended.
pub const MIN_MOVES_EACH: usize = 2;

/// An account's standing in one family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    /// Glicko-2 rating, deviation and volatility.
    pub glicko: Glicko2Rating,
    /// Rated games.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
    /// Unix ms of the last rated game; 0 before the first.
    pub last_ms: i64,
}

impl Default for Standing {
    /// A new player: the crate's default (1500, deviation 350, volatility 0.06).
    fn default() -> Standing {
        Standing {
            glicko: Glicko2Rating::new(),
            games: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            last_ms: 0,
        }
    }
}

/// A rating as the wire shows it: `{"value": 1523, "provisional": true}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shown {
    /// Rounded.
    pub value: i64,
    /// Deviation above [`PROVISIONAL_DEVIATION`].
    pub provisional: bool,
}

impl Shown {
    fn of(g: &Glicko2Rating) -> Shown {
        Shown {
            value: g.rating.round() as i64,
            provisional: g.deviation > PROVISIONAL_DEVIATION,
        }
    }
}

/// One seat's change in `game_over`'s `ratings`: `{"before": 1500, "after": 1662, "delta": 162}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Rounded rating before the game.
    pub before: i64,
    /// Rounded rating after it.
    pub after: i64,
    /// `after - before` (0 for a bot).
    pub delta: i64,
}

/// `game_over`'s `ratings`: X's and O's change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// X.
    pub x: Change,
    /// O.
    pub o: Change,
}

/// What a rated game's end changes: what the players are told, and the rows the store writes
/// with the result.
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    /// For `game_over`.
    pub changes: Changes,
    /// One row per account seat (none for a bot).
    pub rows: Vec<RatingRow>,
}

/// Who sits in a rated seat.
#[derive(Clone, Debug, PartialEq)]
enum Rater {
    Account(Arc<str>),
    Bot(f64),
}

/// Every account's ratings and the bots' published ones. See the module docs.
pub struct Ratings {
    config: RatingsConfig,
    /// Rated bot levels, in the config's order.
    bots: IndexMap<String, f64>,
    accounts: Arc<Accounts>,
    book: Mutex<HashMap<(Arc<str>, Family), Standing>>,
    /// Told every rated game's new rows (a cluster tells the other nodes, whose books follow).
    observer: std::sync::OnceLock<Observer>,
}

/// What [`Ratings::observe`] is given.
pub type Observer = Box<dyn Fn(&[RatingRow]) + Send + Sync>;

impl Ratings {
    /// No ratings yet; the bots' from their config.
    pub fn new(
        config: RatingsConfig,
        bots: &IndexMap<String, BotConfig>,
        accounts: Arc<Accounts>,
    ) -> Ratings {
        Ratings {
            config,
            bots: bots
                .iter()
                .filter_map(|(name, b)| Some((name.clone(), b.rating?)))
                .collect(),
            accounts,
            book: Mutex::new(HashMap::new()),
            observer: std::sync::OnceLock::new(),
        }
    }

    /// Has `observer` told the new rows of every game rated from now on (once; later calls
    /// are ignored).
    pub fn observe(&self, observer: Observer) {
        let _ = self.observer.set(observer);
    }

    /// Adds what the store kept (at start, before serving). Rows of unknown families are
    /// skipped with a warning.
    pub fn load(&self, rows: Vec<RatingRow>) {
        let mut book = self.book.lock();
        for r in rows {
            let Ok(family) = r.family.parse::<Family>() else {
                tracing::warn!(family = %r.family, "stored rating of an unknown family skipped");
                continue;
            };
            // Another node's rows may arrive out of order (each node publishes its own), and
            // two nodes may settle a game of one account from the same row: a row replaces
            // only one with fewer games.
            let key = (Arc::<str>::from(r.player_id), family);
            if book.get(&key).is_some_and(|s| s.games >= r.games) {
                continue;
            }
            book.insert(
                key,
                Standing {
                    glicko: Glicko2Rating {
                        rating: r.rating,
                        deviation: r.deviation,
                        volatility: r.volatility,
                    },
                    games: r.games,
                    wins: r.wins,
                    draws: r.draws,
                    losses: r.losses,
                    last_ms: r.last_ms,
                },
            );
        }
    }

    /// The rating gap quick pairing bridges between seekers when one of them has waited
    /// `waited`: `ratings.pairing_range`, widened by `ratings.pairing_widen_per_sec` a second.
    pub fn pairing_gap(&self, waited: std::time::Duration) -> u64 {
        u64::from(self.config.pairing_range)
            + u64::from(self.config.pairing_widen_per_sec) * waited.as_secs()
    }

    /// The published rating of a bot level, `None` for an unrated one.
    pub fn bot(&self, level: &str) -> Option<f64> {
        self.bots.get(level).copied()
    }

    /// The rated bot levels and their ratings, in the config's order.
    pub fn bots(&self) -> impl Iterator<Item = (&str, f64)> {
        self.bots.iter().map(|(k, v)| (k.as_str(), *v))
    }

    fn rater(&self, seat: &SeatRecord) -> Option<Rater> {
        match seat {
            SeatRecord::Human { player_id, .. } => self
                .accounts
                .of_player(player_id)
                .map(|a| Rater::Account(a.player_id.clone())),
            SeatRecord::Bot { level } => self.bot(level).map(Rater::Bot),
        }
    }

    /// Whether a seat's occupant can play rated games: an account, or a bot with a rating.
    pub fn ratable(&self, seat: &SeatRecord) -> bool {
        self.rater(seat).is_some()
    }

    /// Whether a game is rated: not casual, of a rated family, and both seats ratable (and
    /// not two bots).
    pub fn rated(&self, family: Option<Family>, casual: bool, seats: &[SeatRecord; 2]) -> bool {
        let bots = seats
            .iter()
            .filter(|s| matches!(s, SeatRecord::Bot { .. }))
            .count();
        !casual && family.is_some() && bots < 2 && seats.iter().all(|s| self.ratable(s))
    }

    /// An account's standing in a family (the default for one that has not played in it).
    pub fn standing(&self, player_id: &str, family: Family) -> Standing {
        self.book
            .lock()
            .get(&(Arc::from(player_id), family))
            .copied()
            .unwrap_or_default()
    }

    /// Whether `player_id` is an account (who can play rated games).
    pub fn ratable_player(&self, player_id: &str) -> bool {
        self.accounts.of_player(player_id).is_some()
    }

    /// An account's rating in `family` as the wire shows it (1500, provisional, before its
    /// first game there); `None` for a guest.
    pub fn shown_player(&self, player_id: &str, family: Family) -> Option<Shown> {
        self.accounts.of_player(player_id)?;
        Some(Shown::of(&self.standing(player_id, family).glicko))
    }

    /// A rated bot's rating as the wire shows it (the same in every family); `None` for an
    /// unrated level.
    pub fn shown_bot(&self, level: &str) -> Option<Shown> {
        Some(Shown::of(&self.bot_glicko(self.bot(level)?)))
    }

    /// An account's rating value in `family`, when it is an account.
    pub fn value_of(&self, player_id: &str, family: Family) -> Option<i64> {
        self.accounts.of_player(player_id)?;
        Some(self.standing(player_id, family).glicko.rating.round() as i64)
    }

    /// Every family an account has a rating in.
    pub fn standings(&self, player_id: &str) -> Vec<(Family, Standing)> {
        let mut v: Vec<(Family, Standing)> = self
            .book
            .lock()
            .iter()
            .filter(|((p, _), _)| &**p == player_id)
            .map(|((_, f), s)| (*f, *s))
            .collect();
        v.sort_by_key(|(f, _)| *f);
        v
    }

    fn bot_glicko(&self, rating: f64) -> Glicko2Rating {
        Glicko2Rating {
            rating,
            deviation: self.config.bot_deviation,
            volatility: Glicko2Rating::new().volatility,
        }
    }

    /// The end of a game rated in `family`: both new ratings, or `None` when the game does not
    /// count (aborted: fewer than [`MIN_MOVES_EACH`] moves by a side; or a seat is no longer
    /// ratable). The book is updated here; the caller writes `rows` with the result.
    pub fn settle(
        &self,
        family: Family,
        seats: &[SeatRecord; 2],
        moves: [usize; 2],
        result: Outcome,
        now_ms: i64,
    ) -> Option<Settled> {
        if moves.iter().any(|&m| m < MIN_MOVES_EACH) {
            return None;
        }
        let x = self.rater(&seats[0])?;
        let o = self.rater(&seats[1])?;
        let outcome = match result {
            Outcome::X => Outcomes::WIN,
            Outcome::O => Outcomes::LOSS,
            Outcome::Draw => Outcomes::DRAW,
        };
        // One lock for the read, the update and the write, so two games of one player ending
        // together both count.
        let mut book = self.book.lock();
        let before = |r: &Rater, book: &HashMap<(Arc<str>, Family), Standing>| match r {
            Rater::Account(id) => {
                book.get(&(id.clone(), family))
                    .copied()
                    .unwrap_or_default()
                    .glicko
            }
            Rater::Bot(b) => self.bot_glicko(*b),
        };
        let (bx, bo) = (before(&x, &book), before(&o, &book));
        let (ax, ao) = glicko2(&bx, &bo, &outcome, &Glicko2Config::new());
        let mut rows = Vec::new();
        let mut change = |r: &Rater, seat: Seat, b: Glicko2Rating, a: Glicko2Rating| {
            let Rater::Account(id) = r else {
                let v = b.rating.round() as i64;
                return Change {
                    before: v,
                    after: v,
                    delta: 0,
                };
            };
            let s = book.entry((id.clone(), family)).or_default();
            s.glicko = a;
            s.games += 1;
            match (result, seat) {
                (Outcome::Draw, _) => s.draws += 1,
                (Outcome::X, Seat::X) | (Outcome::O, Seat::O) => s.wins += 1,
                _ => s.losses += 1,
            }
            s.last_ms = now_ms;
            let won = matches!(
                (result, seat),
                (Outcome::X, Seat::X) | (Outcome::O, Seat::O)
            );
            let change = RowChange {
                from: b.rating,
                rating: a.rating - b.rating,
                wins: u32::from(won),
                draws: u32::from(result == Outcome::Draw),
                losses: u32::from(!won && result != Outcome::Draw),
            };
            rows.push(RatingRow {
                player_id: id.to_string(),
                family: family.to_string(),
                rating: a.rating,
                deviation: a.deviation,
                volatility: a.volatility,
                games: s.games,
                wins: s.wins,
                draws: s.draws,
                losses: s.losses,
                last_ms: now_ms,
                change,
            });
            let (before, after) = (b.rating.round() as i64, a.rating.round() as i64);
            Change {
                before,
                after,
                delta: after - before,
            }
        };
        let cx = change(&x, Seat::X, bx, ax);
        let co = change(&o, Seat::O, bo, ao);
        drop(book);
        if let Some(observer) = self.observer.get() {
            observer(&rows);
        }
        Some(Settled {
            changes: Changes { x: cx, o: co },
            rows,
        })
    }

    /// The leaderboard of `family` at `now_ms`: see the `leaderboard` module.
    pub fn leaderboard(&self, family: Family, limit: usize, now_ms: i64) -> Vec<Leader> {
        let book = self.book.lock();
        leaderboard::rank(
            book.iter()
                .filter(|((_, f), _)| *f == family)
                .filter_map(|((p, _), s)| Some((self.accounts.of_player(p)?.username.clone(), *s))),
            &self.config,
            limit,
            now_ms,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::store::{NullStore, StoreAccounts, StoredAccount};

    fn ratings() -> Ratings {
        let config = Config::default();
        let accounts = Arc::new(Accounts::new(Arc::new(NullStore), &config.limits));
        accounts.load(StoreAccounts {
            accounts: ["a", "b"]
                .map(|p| StoredAccount {
                    player_id: p.into(),
                    username: p.to_uppercase(),
                    phc: String::new(),
                })
                .to_vec(),
            tokens: Vec::new(),
        });
        Ratings::new(config.ratings.clone(), &config.bots, accounts)
    }

    fn human(p: &str) -> SeatRecord {
        SeatRecord::Human {
            player_id: p.into(),
            name: p.into(),
        }
    }

    const FAMILY: Family = Family {
        rules: RuleFamily::Caro,
        speed: Speed::Blitz,
    };

    #[test]
    fn a_row_never_replaces_one_with_more_games() {
        let r = ratings();
        let (first, second) = (
            r.settle(FAMILY, &[human("a"), human("b")], [2, 2], Outcome::X, 1)
                .unwrap(),
            r.settle(FAMILY, &[human("a"), human("b")], [2, 2], Outcome::X, 2)
                .unwrap(),
        );
        assert_eq!(second.rows[0].change.wins, 1);
        // The first game's rows arrive late (another node's frame): they are older.
        r.load(first.rows);
        let a = r.standing("a", FAMILY);
        assert_eq!(
            (a.games, a.wins, a.glicko.rating),
            (2, 2, second.rows[0].rating)
        );
        // Nor do rows of as many games (another node's game, settled from the same row).
        r.load(vec![RatingRow {
            rating: 1234.0,
            ..second.rows[0].clone()
        }]);
        assert_eq!(r.standing("a", FAMILY).glicko.rating, second.rows[0].rating);
    }

    #[test]
    fn who_is_rated() {
        let r = ratings();
        let bot = SeatRecord::Bot {
            level: "club".into(),
        };
        assert!(r.rated(Some(FAMILY), false, &[human("a"), human("b")]));
        assert!(r.rated(Some(FAMILY), false, &[bot.clone(), human("b")]));
        assert!(!r.rated(Some(FAMILY), true, &[human("a"), human("b")]));
        assert!(!r.rated(None, false, &[human("a"), human("b")]));
        assert!(!r.rated(Some(FAMILY), false, &[human("a"), human("guest")]));
        assert!(!r.rated(Some(FAMILY), false, &[bot.clone(), bot]));
    }

    /// Fewer than two moves by a side is an aborted game; two games of one player both count,
    /// each from the rating the other left.
    #[test]
    fn settling_counts_games_with_two_moves_a_side() {
        let r = ratings();
        let seats = [human("a"), human("b")];
        assert_eq!(r.settle(FAMILY, &seats, [2, 1], Outcome::X, 1), None);
        let first = r.settle(FAMILY, &seats, [2, 2], Outcome::X, 1).unwrap();
        assert_eq!(first.changes.x.before, 1500);
        assert_eq!(first.rows.len(), 2);
        let second = r.settle(FAMILY, &seats, [3, 2], Outcome::Draw, 2).unwrap();
        assert_eq!(second.changes.x.before, first.changes.x.after);
        let a = r.standing("a", FAMILY);
        assert_eq!(
            (a.games, a.wins, a.draws, a.losses, a.last_ms),
            (2, 1, 1, 0, 2)
        );
        let b = r.standing("b", FAMILY);
        assert_eq!((b.games, b.wins, b.draws, b.losses), (2, 0, 1, 1));
    }

    #[test]
    fn a_bot_keeps_its_rating() {
        let r = ratings();
        let bot = SeatRecord::Bot {
            level: "club".into(),
        };
        let s = r
            .settle(FAMILY, &[bot, human("a")], [2, 2], Outcome::O, 1)
            .unwrap();
        assert_eq!(
            s.changes.x,
            Change {
                before: 1619,
                after: 1619,
                delta: 0
            }
        );
        assert!(s.changes.o.delta > 0);
        assert_eq!(s.rows.len(), 1);
        assert_eq!(r.bot("club"), Some(1619.0));
    }
}
