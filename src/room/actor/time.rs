//! Time: `timers` says which deadline is due (abandonment, absence cap, crowd updates, finished
//! and empty rooms, unwatched bot games) and `clocks` whose flag fell; this file ends games and
//! closes rooms accordingly.

use tokio::time::Instant;

use super::Room;
use crate::protocol::{Outcome, Reason};
use crate::room::timers::Timers;

impl Room {
    // --- Time: `timers` says what is due, one deadline at a time. ---

    /// Starts or stops the abandonment clock of the side to move; true if one started now.
    pub(super) fn update_clock(&mut self) -> bool {
        let to_move = self.to_move();
        let absent = self.playing() && self.seats.absent(to_move);
        self.timers.turn_absent(absent.then_some(to_move))
    }

    /// Ends the game if the side to move has run out of time by `now`: on time with a clock,
    /// as abandoned when a game without one hit its idle limit (`rooms.idle_move_ms`).
    pub(super) fn flag_if_due(&mut self, now: Instant) {
        if !self.playing() {
            return;
        }
        if let Some(seat) = self.clocks.flagged(now) {
            let reason = if self.clocks.time_control().is_clocked() {
                Reason::Time
            } else {
                Reason::Abandoned
            };
            tracing::info!(room = %self.id, ?seat, ?reason, "out of time");
            self.finish(seat.other().into(), reason, None);
        }
    }

    pub(super) fn on_timer(&mut self) {
        let now = Instant::now();
        self.flag_if_due(now);
        let ctx = self.ctx.clone();
        let settings = &ctx.settings;
        if let Some(seat) = self.timers.turn_expired(now, settings) {
            self.finish(seat.other().into(), Reason::Abandoned, None);
        }
        if self.playing() {
            let away = self.seats.away_since();
            if let Some(seat) = Timers::absence_expired(now, settings, away) {
                self.finish(seat.other().into(), Reason::Abandoned, None);
            }
        }
        if self.timers.crowd_due(now, settings) {
            self.room_update();
        }
        if self.timers.finished_expired(now, settings) {
            self.closed = true;
        }
        let (empty, playing) = (self.seats.is_empty(), self.playing());
        if self.timers.unwatched_expired(now, settings, empty, playing) {
            // Nobody sees this game between bots: stop it (recorded, so it is not restored
            // after a restart) and close the room at once, freeing its bot slot, its place in
            // `limits.max_rooms` and its creator's `limits.bot_rooms_per_player`.
            tracing::info!(room = %self.id, "bot game aborted: nobody watching");
            self.finish(Outcome::Draw, Reason::Aborted, None);
            self.closed = true;
            return;
        }
        if self.timers.empty_expired(now, settings, empty, playing) {
            self.closed = true;
        }
    }
}
