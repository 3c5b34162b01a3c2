//! `[limits]`: the sizes and rates the server refuses to exceed, per connection, per room and in
//! all.

use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[limits]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawLimits {
    /// Largest WebSocket frame / message accepted.
    pub max_frame_bytes: usize,
    /// Simultaneous connections (WebSocket and HTTP).
    pub max_connections: usize,
    /// Simultaneous connections from one address (an IPv6 /64); 0: unlimited.
    pub max_connections_per_ip: usize,
    /// WebSocket upgrades one address may make per second, on average; 0: unlimited.
    pub upgrades_per_ip_per_sec: f64,
    /// Upgrades one address may make at once before the rate applies.
    pub upgrades_per_ip_burst: u32,
    /// Login attempts (`login`, `change_password`) one address may make per minute.
    pub logins_per_ip_per_minute: u32,
    /// Login attempts against one account per minute, from anywhere.
    pub logins_per_account_per_minute: u32,
    /// Open rooms.
    pub max_rooms: usize,
    /// Rooms one player has created whose game has not finished.
    pub rooms_per_player: usize,
    /// Of those, rooms with a bot in both seats.
    pub bot_rooms_per_player: usize,
    /// Of those, rooms with one bot seat (a game against a bot).
    pub bot_games_per_player: usize,
    /// Rooms created from one address (an IPv6 /64) whose game has not finished, whatever the
    /// players; 0: unlimited.
    pub rooms_per_ip: usize,
    /// Spectators per room.
    pub max_spectators: usize,
    /// Longest player name, in characters.
    pub max_name_chars: usize,
    /// Smallest Caro board side.
    pub min_board: u8,
    /// Largest Caro board side.
    pub max_board: u8,
    /// Token bucket refill, messages per second.
    pub rate_per_sec: f64,
    /// Token bucket size.
    pub rate_burst: u32,
    /// Messages refused in a row before the connection is closed with 1008.
    pub flood_close_after: u32,
    /// Outgoing messages queued per connection before it counts as too slow and is dropped.
    pub send_queue: usize,
    /// Outgoing bytes queued (not yet written) per connection before it is dropped as too slow.
    pub send_queue_bytes: usize,
    /// Most rooms in one `room_list` page (the default and the most a client may ask for).
    pub room_list_page: usize,
    /// Shortest time control a game may have: Fischer's `base_ms`, a `per_move`'s `move_ms`.
    pub min_clock_ms: u64,
    /// Longest time control a game may have (the same two values).
    pub max_clock_ms: u64,
    /// Largest Fischer increment.
    pub max_increment_ms: u64,
}

impl Default for RawLimits {
    fn default() -> Self {
        RawLimits {
            max_frame_bytes: 4096,
            max_connections: 10_000,
            max_connections_per_ip: 64,
            upgrades_per_ip_per_sec: 10.0,
            upgrades_per_ip_burst: 50,
            logins_per_ip_per_minute: 20,
            logins_per_account_per_minute: 5,
            max_rooms: 2_000,
            rooms_per_player: 10,
            bot_rooms_per_player: 2,
            bot_games_per_player: 4,
            rooms_per_ip: 64,
            max_spectators: 500,
            max_name_chars: 24,
            min_board: 5,
            max_board: 32,
            rate_per_sec: 10.0,
            rate_burst: 30,
            flood_close_after: 50,
            send_queue: 512,
            send_queue_bytes: 256 * 1024,
            room_list_page: 100,
            min_clock_ms: 1_000,
            max_clock_ms: 10_800_000,
            max_increment_ms: 60_000,
        }
    }
}

/// `[limits]`, validated: the same keys, each within its bounds.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest frame / message (256..=1 MiB).
    pub max_frame_bytes: usize,
    /// Simultaneous connections (>= 1).
    pub max_connections: usize,
    /// Simultaneous connections per address; `None`: unlimited (written as 0).
    pub max_connections_per_ip: Option<usize>,
    /// Upgrades per address per second; `None`: unlimited (written as 0).
    pub upgrades_per_ip_per_sec: Option<f64>,
    /// Upgrades per address at once (>= 1).
    pub upgrades_per_ip_burst: u32,
    /// Login attempts per address per minute (>= 1), also its burst.
    pub logins_per_ip_per_minute: u32,
    /// Login attempts per account per minute (>= 1), also its burst.
    pub logins_per_account_per_minute: u32,
    /// Open rooms (>= 1).
    pub max_rooms: usize,
    /// Unfinished rooms one player has created (>= 1).
    pub rooms_per_player: usize,
    /// Unfinished bot-vs-bot rooms one player has created (>= 1).
    pub bot_rooms_per_player: usize,
    /// Unfinished games against a bot one player has created (>= 1).
    pub bot_games_per_player: usize,
    /// Unfinished rooms created from one address; `None`: unlimited (written as 0).
    pub rooms_per_ip: Option<usize>,
    /// Spectators per room.
    pub max_spectators: usize,
    /// Longest name (>= 1).
    pub max_name_chars: usize,
    /// Smallest Caro board side.
    pub min_board: u8,
    /// Largest Caro board side (>= `min_board`).
    pub max_board: u8,
    /// Token bucket refill per second (finite, > 0).
    pub rate_per_sec: f64,
    /// Token bucket size (>= 1).
    pub rate_burst: u32,
    /// Refused messages in a row before closing with 1008 (>= 1).
    pub flood_close_after: u32,
    /// Per-connection outgoing queue (>= 1).
    pub send_queue: usize,
    /// Per-connection outgoing bytes not yet written (>= 4096).
    pub send_queue_bytes: usize,
    /// Rooms per `room_list` page (1..=10000).
    pub room_list_page: usize,
    /// Shortest base or per-move time (>= 100).
    pub min_clock_ms: u64,
    /// Longest base or per-move time (`min_clock_ms..=2^40`).
    pub max_clock_ms: u64,
    /// Largest Fischer increment (<= `max_clock_ms`).
    pub max_increment_ms: u64,
}

impl TryFrom<RawLimits> for Limits {
    type Error = ConfigError;

    fn try_from(raw: RawLimits) -> Result<Self, ConfigError> {
        // Destructured so that a key added to RawLimits cannot be forgotten here.
        let RawLimits {
            max_frame_bytes,
            max_connections,
            max_connections_per_ip,
            upgrades_per_ip_per_sec,
            upgrades_per_ip_burst,
            logins_per_ip_per_minute,
            logins_per_account_per_minute,
            max_rooms,
            rooms_per_player,
            bot_rooms_per_player,
            bot_games_per_player,
            rooms_per_ip,
            max_spectators,
            max_name_chars,
            min_board,
            max_board,
            rate_per_sec,
            rate_burst,
            flood_close_after,
            send_queue,
            send_queue_bytes,
            room_list_page,
            min_clock_ms,
            max_clock_ms,
            max_increment_ms,
        } = raw;
        if min_clock_ms < 100 {
            return Err(invalid("limits.min_clock_ms", "must be at least 100"));
        }
        // 2^40 ms is about 35 years: far beyond any game, and far from overflowing an Instant.
        if !(min_clock_ms..=1 << 40).contains(&max_clock_ms) {
            return Err(invalid(
                "limits.max_clock_ms",
                "must be in limits.min_clock_ms..=1099511627776",
            ));
        }
        if max_increment_ms > max_clock_ms {
            return Err(invalid(
                "limits.max_increment_ms",
                "must be at most limits.max_clock_ms",
            ));
        }
        if max_frame_bytes < 256 {
            return Err(invalid("limits.max_frame_bytes", "must be at least 256"));
        }
        if max_frame_bytes > 1 << 20 {
            return Err(invalid("limits.max_frame_bytes", "must be at most 1048576"));
        }
        for (key, v) in [
            ("limits.max_connections", max_connections),
            ("limits.max_rooms", max_rooms),
            ("limits.rooms_per_player", rooms_per_player),
            ("limits.bot_rooms_per_player", bot_rooms_per_player),
            ("limits.bot_games_per_player", bot_games_per_player),
            ("limits.max_name_chars", max_name_chars),
            ("limits.send_queue", send_queue),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        // Below a few KiB ordinary replies (a room's state) would count as piling up.
        if send_queue_bytes < 4096 {
            return Err(invalid("limits.send_queue_bytes", "must be at least 4096"));
        }
        if !(1..=10_000).contains(&room_list_page) {
            return Err(invalid("limits.room_list_page", "must be in 1..=10000"));
        }
        if !(MIN_CARO_SIZE..=MAX_SIZE).contains(&min_board) {
            return Err(invalid(
                "limits.min_board",
                format!("must be in {MIN_CARO_SIZE}..={MAX_SIZE}"),
            ));
        }
        if !(min_board..=MAX_SIZE).contains(&max_board) {
            return Err(invalid(
                "limits.max_board",
                format!("must be in limits.min_board..={MAX_SIZE}"),
            ));
        }
        if !(rate_per_sec.is_finite() && rate_per_sec > 0.0) {
            return Err(invalid("limits.rate_per_sec", "must be a positive number"));
        }
        if rate_burst == 0 {
            return Err(invalid("limits.rate_burst", "must be at least 1"));
        }
        for (key, v) in [
            ("limits.logins_per_ip_per_minute", logins_per_ip_per_minute),
            (
                "limits.logins_per_account_per_minute",
                logins_per_account_per_minute,
            ),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        if flood_close_after == 0 {
            return Err(invalid("limits.flood_close_after", "must be at least 1"));
        }
        // Above 1e9 a token would come back in less than a nanosecond, governor's resolution.
        if !(upgrades_per_ip_per_sec.is_finite() && (0.0..=1e9).contains(&upgrades_per_ip_per_sec))
        {
            return Err(invalid(
                "limits.upgrades_per_ip_per_sec",
                "must be a number in 0..=1e9 (0: unlimited)",
            ));
        }
        if upgrades_per_ip_burst == 0 {
            return Err(invalid(
                "limits.upgrades_per_ip_burst",
                "must be at least 1",
            ));
        }
        Ok(Limits {
            max_frame_bytes,
            max_connections,
            max_connections_per_ip: (max_connections_per_ip > 0).then_some(max_connections_per_ip),
            upgrades_per_ip_per_sec: (upgrades_per_ip_per_sec > 0.0)
                .then_some(upgrades_per_ip_per_sec),
            upgrades_per_ip_burst,
            logins_per_ip_per_minute,
            logins_per_account_per_minute,
            max_rooms,
            rooms_per_player,
            bot_rooms_per_player,
            bot_games_per_player,
            rooms_per_ip: (rooms_per_ip > 0).then_some(rooms_per_ip),
            max_spectators,
            max_name_chars,
            min_board,
            max_board,
            rate_per_sec,
            rate_burst,
            flood_close_after,
            send_queue,
            send_queue_bytes,
            room_list_page,
            min_clock_ms,
            max_clock_ms,
            max_increment_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(raw: RawLimits) -> String {
        Limits::try_from(raw).unwrap_err().to_string()
    }

    #[test]
    fn clock_bounds_errors_name_the_key() {
        let d = RawLimits::default;
        assert_eq!(
            err(RawLimits {
                min_clock_ms: 99,
                ..d()
            }),
            "limits.min_clock_ms: must be at least 100"
        );
        assert_eq!(
            err(RawLimits {
                min_clock_ms: 5_000,
                max_clock_ms: 4_999,
                ..d()
            }),
            "limits.max_clock_ms: must be in limits.min_clock_ms..=1099511627776"
        );
        assert_eq!(
            err(RawLimits {
                max_clock_ms: 5_000,
                max_increment_ms: 5_001,
                ..d()
            }),
            "limits.max_increment_ms: must be at most limits.max_clock_ms"
        );
    }

    #[test]
    fn zero_per_address_caps_mean_unlimited() {
        let l = Limits::try_from(RawLimits::default()).unwrap();
        assert_eq!(
            (l.max_connections_per_ip, l.rooms_per_ip),
            (Some(64), Some(64))
        );
        let l = Limits::try_from(RawLimits {
            max_connections_per_ip: 0,
            rooms_per_ip: 0,
            ..RawLimits::default()
        })
        .unwrap();
        assert_eq!((l.max_connections_per_ip, l.rooms_per_ip), (None, None));
    }

    #[test]
    fn limits_errors_name_the_key() {
        let d = RawLimits::default;
        assert_eq!(
            err(RawLimits {
                max_rooms: 0,
                ..d()
            }),
            "limits.max_rooms: must be at least 1"
        );
        assert_eq!(
            err(RawLimits {
                rooms_per_player: 0,
                ..d()
            }),
            "limits.rooms_per_player: must be at least 1"
        );
        assert_eq!(
            err(RawLimits {
                bot_rooms_per_player: 0,
                ..d()
            }),
            "limits.bot_rooms_per_player: must be at least 1"
        );
        assert_eq!(
            err(RawLimits {
                bot_games_per_player: 0,
                ..d()
            }),
            "limits.bot_games_per_player: must be at least 1"
        );
        assert_eq!(
            err(RawLimits {
                max_frame_bytes: (1 << 20) + 1,
                ..d()
            }),
            "limits.max_frame_bytes: must be at most 1048576"
        );
        assert_eq!(
            err(RawLimits {
                min_board: 4,
                ..d()
            }),
            "limits.min_board: must be in 5..=32"
        );
        assert_eq!(
            err(RawLimits {
                min_board: 15,
                max_board: 9,
                ..d()
            }),
            "limits.max_board: must be in limits.min_board..=32"
        );
        assert_eq!(
            err(RawLimits {
                rate_per_sec: f64::NAN,
                ..d()
            }),
            "limits.rate_per_sec: must be a positive number"
        );
        assert_eq!(
            err(RawLimits {
                upgrades_per_ip_per_sec: -1.0,
                ..d()
            }),
            "limits.upgrades_per_ip_per_sec: must be a number in 0..=1e9 (0: unlimited)"
        );
        assert_eq!(
            err(RawLimits {
                upgrades_per_ip_burst: 0,
                ..d()
            }),
            "limits.upgrades_per_ip_burst: must be at least 1"
        );
        assert_eq!(
            err(RawLimits {
                send_queue_bytes: 1000,
                ..d()
            }),
            "limits.send_queue_bytes: must be at least 4096"
        );
        assert_eq!(
            err(RawLimits {
                room_list_page: 0,
                ..d()
            }),
            "limits.room_list_page: must be in 1..=10000"
        );
    }
}
