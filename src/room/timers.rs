//! A room's deadlines: the abandonment clock of an absent side to move (`grace`), the cap on a
//! player's total absence (`absent_cap`), the pacing of crowd `room_update`s (`crowd_update`),
//! how long a finished or empty room stays open (`finished_ttl`, `empty_ttl`), and how long a
//! game between two bots plays on with nobody watching (`unwatched_bot_game`).
//!
//! The room's loop sleeps until [`Timers::next_deadline`]; when it wakes, the actor asks which
//! deadlines passed, one at a time, because each answer may change the next (an abandonment
//! ends the game, and an ended game no longer counts absences). This module only keeps instants
//! and compares them: it never ends a game or sends anything itself.
//!
//! Game clocks (time per move or per game) are the `clocks` module's: the actor adds the
//! running side's flag to this module's next deadline.

use tokio::time::Instant;

use super::RoomSettings;
use crate::protocol::Seat;

/// The room's timestamps.
pub(super) struct Timers {
    /// The side to move is away: when its abandonment clock started.
    turn_clock: Option<(Seat, Instant)>,
    /// Spectators came or went since the last `room_update`, too soon to send another.
    crowd_pending: bool,
    /// The last `room_update`.
    last_update: Instant,
    /// When the game ended.
    finished_at: Option<Instant>,
    /// Since when nobody is in the room.
    empty_since: Option<Instant>,
    /// Bots hold both seats: the game in progress ends once nobody has watched it for
    /// `unwatched_bot_game`.
    bots_only: bool,
}

impl Timers {
    /// No clock running; `bots_only` for a room with a bot in both seats.
    pub(super) fn new(bots_only: bool) -> Timers {
        Timers {
            turn_clock: None,
            crowd_pending: false,
            last_update: Instant::now(),
            finished_at: None,
            empty_since: None,
            bots_only,
        }
    }

    /// Runs the abandonment clock of `absent` (the side to move, when it is away), or stops it
    /// (`None`). A clock already running for that side keeps its start. True if a clock
    /// started now (the away player's countdown changed: the room tells its members).
    pub(super) fn turn_absent(&mut self, absent: Option<Seat>) -> bool {
        match absent {
            None => {
                self.turn_clock = None;
                false
            }
            Some(seat) if self.turn_clock.map(|(s, _)| s) != Some(seat) => {
                self.turn_clock = Some((seat, Instant::now()));
                true
            }
            Some(_) => false,
        }
    }

    /// When `seat`, away since `away_since`, loses by abandonment if it does not come back:
    /// `grace` after its turn's abandonment clock started, and at most `absent_cap` after it
    /// left. `None` for a player who is not away.
    pub(super) fn abandon_deadline(
        &self,
        settings: &RoomSettings,
        seat: Seat,
        away_since: Option<Instant>,
    ) -> Option<Instant> {
        let cap = away_since? + settings.absent_cap;
        Some(match self.turn_clock {
            Some((s, t)) if s == seat => cap.min(t + settings.grace),
            _ => cap,
        })
    }

    /// The game ended now: no abandonment clock, and the room closes `finished_ttl` from now.
    pub(super) fn finished(&mut self) {
        self.turn_clock = None;
        self.finished_at = Some(Instant::now());
    }

    /// Someone is in the room.
    pub(super) fn occupied(&mut self) {
        self.empty_since = None;
    }

    /// The room may have emptied: its empty clock starts if it did and was not running.
    pub(super) fn maybe_empty(&mut self, empty: bool) {
        if empty && self.empty_since.is_none() {
            self.empty_since = Some(Instant::now());
        }
    }

    /// Spectators came or went: true if a `room_update` may go now, otherwise one is owed
    /// after `crowd_update`.
    pub(super) fn crowd_changed(&mut self, settings: &RoomSettings) -> bool {
        if self.last_update.elapsed() >= settings.crowd_update {
            true
        } else {
            self.crowd_pending = true;
            false
        }
    }

    /// A `room_update` went out now.
    pub(super) fn updated(&mut self) {
        self.crowd_pending = false;
        self.last_update = Instant::now();
    }

    /// The earliest deadline: `playing` says whether a game is in progress, `away` since when
    /// each seat's player is away.
    pub(super) fn next_deadline(
        &self,
        settings: &RoomSettings,
        playing: bool,
        away: [Option<Instant>; 2],
    ) -> Option<Instant> {
        let mut d = Deadlines(None);
        if let Some((_, t)) = self.turn_clock {
            d.add(t + settings.grace);
        }
        if playing {
            for t in away.into_iter().flatten() {
                d.add(t + settings.absent_cap);
            }
        }
        if self.crowd_pending {
            d.add(self.last_update + settings.crowd_update);
        }
        if let Some(t) = self.finished_at {
            d.add(t + settings.finished_ttl);
        }
        if let Some(t) = self.empty_since {
            if !playing {
                d.add(t + settings.empty_ttl);
            } else if self.bots_only {
                d.add(t + settings.unwatched_bot_game);
            }
        }
        d.0
    }

    /// Whether the game in progress between two bots has had nobody in its room for
    /// `unwatched_bot_game` by `now`. Bot games can last hours (two `master`s on a big board),
    /// and a game nobody sees is not worth the bot slot and the room it holds.
    pub(super) fn unwatched_expired(
        &self,
        now: Instant,
        settings: &RoomSettings,
        empty: bool,
        playing: bool,
    ) -> bool {
        self.bots_only
            && empty
            && playing
            && self
                .empty_since
                .is_some_and(|t| now >= t + settings.unwatched_bot_game)
    }

    /// The absent side to move whose grace ran out by `now`.
    pub(super) fn turn_expired(&self, now: Instant, settings: &RoomSettings) -> Option<Seat> {
        let (seat, t) = self.turn_clock?;
        (now >= t + settings.grace).then_some(seat)
    }

    /// The first seat (X first) whose player has been away for `absent_cap` by `now`.
    pub(super) fn absence_expired(
        now: Instant,
        settings: &RoomSettings,
        away: [Option<Instant>; 2],
    ) -> Option<Seat> {
        Seat::BOTH
            .into_iter()
            .find(|s| away[s.index()].is_some_and(|t| now >= t + settings.absent_cap))
    }

    /// Whether an owed crowd `room_update` is due by `now`.
    pub(super) fn crowd_due(&self, now: Instant, settings: &RoomSettings) -> bool {
        self.crowd_pending && now >= self.last_update + settings.crowd_update
    }

    /// Whether the finished game's room has stayed open long enough by `now`.
    pub(super) fn finished_expired(&self, now: Instant, settings: &RoomSettings) -> bool {
        self.finished_at
            .is_some_and(|t| now >= t + settings.finished_ttl)
    }

    /// Whether the room, empty and with no game in progress, has stayed open long enough by
    /// `now`. A room found occupied forgets its empty clock.
    pub(super) fn empty_expired(
        &mut self,
        now: Instant,
        settings: &RoomSettings,
        empty: bool,
        playing: bool,
    ) -> bool {
        let Some(t) = self.empty_since else {
            return false;
        };
        if !empty {
            self.empty_since = None;
            return false;
        }
        // A game in progress never closes for emptiness: abandonment ends a game with a human
        // seat, and a game between bots is aborted once unwatched (`unwatched_expired`), so
        // every game that started is finished and replayable.
        !playing && now >= t + settings.empty_ttl
    }
}

/// The earliest of some instants (no allocation: `next_deadline` runs after every command).
struct Deadlines(Option<Instant>);

impl Deadlines {
    fn add(&mut self, t: Instant) {
        self.0 = Some(self.0.map_or(t, |d| d.min(t)));
    }
}

/// Sleeps until `deadline`, or forever without one.
pub(super) async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn settings() -> RoomSettings {
        RoomSettings {
            grace: Duration::from_secs(60),
            absent_cap: Duration::from_secs(300),
            crowd_update: Duration::from_secs(1),
            finished_ttl: Duration::from_secs(600),
            empty_ttl: Duration::from_secs(120),
            unwatched_bot_game: Duration::from_secs(30),
            history_events: 10,
            chat_history: 10,
            send_queue: 64,
            max_spectators: 10,
            min_board: 5,
            max_board: 25,
            idle_move: Duration::from_secs(900),
            min_clock_ms: 1000,
            max_clock_ms: 10_800_000,
            max_increment_ms: 60_000,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_turn_clock_keeps_its_start_while_the_same_side_is_away() {
        let s = settings();
        let mut t = Timers::new(false);
        let start = Instant::now();
        t.turn_absent(Some(Seat::O));
        tokio::time::advance(Duration::from_secs(30)).await;
        t.turn_absent(Some(Seat::O));
        assert_eq!(
            t.next_deadline(&s, true, [None, None]),
            Some(start + s.grace)
        );
        assert_eq!(t.turn_expired(start + s.grace, &s), Some(Seat::O));
        t.turn_absent(None);
        assert_eq!(t.next_deadline(&s, true, [None, None]), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_room_closes_only_without_a_game_in_progress() {
        let s = settings();
        let mut t = Timers::new(false);
        let start = Instant::now();
        t.maybe_empty(true);
        assert_eq!(t.next_deadline(&s, true, [None, None]), None);
        let later = start + s.empty_ttl;
        assert!(!t.empty_expired(later, &s, true, true));
        assert!(t.empty_expired(later, &s, true, false));
        // Someone came in: the empty clock is forgotten.
        assert!(!t.empty_expired(later, &s, false, false));
        assert_eq!(t.next_deadline(&s, false, [None, None]), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unwatched_bot_game_ends_but_a_watched_or_human_one_does_not() {
        let s = settings();
        let start = Instant::now();
        let mut bots = Timers::new(true);
        bots.maybe_empty(true);
        assert_eq!(
            bots.next_deadline(&s, true, [None, None]),
            Some(start + s.unwatched_bot_game)
        );
        let later = start + s.unwatched_bot_game;
        assert!(!bots.unwatched_expired(later - Duration::from_millis(1), &s, true, true));
        assert!(bots.unwatched_expired(later, &s, true, true));
        // Someone watching, or no game in progress (the empty room rule then): not this rule.
        assert!(!bots.unwatched_expired(later, &s, false, true));
        assert!(!bots.unwatched_expired(later, &s, true, false));
        // A game with a human is ended by abandonment, never by this.
        let mut human = Timers::new(false);
        human.maybe_empty(true);
        assert_eq!(human.next_deadline(&s, true, [None, None]), None);
        assert!(!human.unwatched_expired(later, &s, true, true));
    }
}
