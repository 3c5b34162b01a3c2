//! `[rooms]`: how long rooms and absent players are waited for, and how often rooms and the
//! lobby tell watchers what changed.

use std::time::Duration;

use serde::Deserialize;

use super::{invalid, ms, ConfigError};

/// `[rooms]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawRooms {
    /// Abandonment clock of an absent player, running while it is their turn.
    pub grace_ms: u64,
    /// An absent player loses after this long away, whoever's turn it is.
    pub absent_cap_ms: u64,
    /// Finished rooms stay watchable this long.
    pub finished_ttl_ms: u64,
    /// Rooms with nobody connected close after this long.
    pub empty_ttl_ms: u64,
    /// A bot-vs-bot game nobody watches is aborted after this long.
    pub unwatched_bot_game_ms: u64,
    /// Spectator-count updates are sent at most this often per room.
    pub crowd_update_ms: u64,
    /// Record events kept per room for `sync`.
    pub history_events: usize,
    /// Lobby watchers get the rooms that changed at most this often.
    pub lobby_update_ms: u64,
    /// In a game without a clock, the side to move loses (abandoned) after this long without
    /// moving.
    pub idle_move_ms: u64,
}

impl Default for RawRooms {
    fn default() -> Self {
        RawRooms {
            grace_ms: 60_000,
            absent_cap_ms: 300_000,
            finished_ttl_ms: 600_000,
            empty_ttl_ms: 120_000,
            unwatched_bot_game_ms: 30_000,
            crowd_update_ms: 1_000,
            history_events: 4_096,
            lobby_update_ms: 1_000,
            idle_move_ms: 900_000,
        }
    }
}

/// `[rooms]`, validated.
#[derive(Debug, Clone)]
pub struct RoomsConfig {
    /// Abandonment clock (>= 1 ms).
    pub grace: Duration,
    /// Absence cap (>= `grace`).
    pub absent_cap: Duration,
    /// Finished room lifetime.
    pub finished_ttl: Duration,
    /// Empty room lifetime.
    pub empty_ttl: Duration,
    /// How long a bot-vs-bot game plays on with nobody in its room.
    pub unwatched_bot_game: Duration,
    /// Crowd update interval.
    pub crowd_update: Duration,
    /// Events kept for `sync` (>= 1).
    pub history_events: usize,
    /// Lobby feed interval (>= 10 ms).
    pub lobby_update: Duration,
    /// Idle limit per move in a game without a clock (>= 1 s).
    pub idle_move: Duration,
}

impl TryFrom<RawRooms> for RoomsConfig {
    type Error = ConfigError;

    fn try_from(raw: RawRooms) -> Result<Self, ConfigError> {
        let RawRooms {
            grace_ms,
            absent_cap_ms,
            finished_ttl_ms,
            empty_ttl_ms,
            unwatched_bot_game_ms,
            crowd_update_ms,
            history_events,
            lobby_update_ms,
            idle_move_ms,
        } = raw;
        if history_events == 0 {
            return Err(invalid("rooms.history_events", "must be at least 1"));
        }
        if absent_cap_ms < grace_ms {
            return Err(invalid(
                "rooms.absent_cap_ms",
                "must be at least rooms.grace_ms",
            ));
        }
        Ok(RoomsConfig {
            grace: ms("rooms.grace_ms", grace_ms, 1)?,
            absent_cap: ms("rooms.absent_cap_ms", absent_cap_ms, 1)?,
            finished_ttl: ms("rooms.finished_ttl_ms", finished_ttl_ms, 0)?,
            empty_ttl: ms("rooms.empty_ttl_ms", empty_ttl_ms, 0)?,
            unwatched_bot_game: ms("rooms.unwatched_bot_game_ms", unwatched_bot_game_ms, 0)?,
            crowd_update: ms("rooms.crowd_update_ms", crowd_update_ms, 0)?,
            history_events,
            lobby_update: ms("rooms.lobby_update_ms", lobby_update_ms, 10)?,
            idle_move: ms("rooms.idle_move_ms", idle_move_ms, 1_000)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(raw: RawRooms) -> String {
        RoomsConfig::try_from(raw).unwrap_err().to_string()
    }

    #[test]
    fn rooms_errors_name_the_key() {
        let d = RawRooms::default;
        assert_eq!(
            err(RawRooms {
                grace_ms: 10,
                absent_cap_ms: 9,
                ..d()
            }),
            "rooms.absent_cap_ms: must be at least rooms.grace_ms"
        );
        assert_eq!(
            err(RawRooms {
                grace_ms: 0,
                absent_cap_ms: 0,
                ..d()
            }),
            "rooms.grace_ms: must be at least 1"
        );
        assert_eq!(
            err(RawRooms {
                lobby_update_ms: 9,
                ..d()
            }),
            "rooms.lobby_update_ms: must be at least 10"
        );
        assert_eq!(
            err(RawRooms {
                history_events: 0,
                ..d()
            }),
            "rooms.history_events: must be at least 1"
        );
        assert_eq!(
            err(RawRooms {
                idle_move_ms: 999,
                ..d()
            }),
            "rooms.idle_move_ms: must be at least 1000"
        );
    }
}
