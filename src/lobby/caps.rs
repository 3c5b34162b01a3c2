//! Per-player caps: how many unfinished rooms of each kind (any, bot-vs-bot, against a bot) one
//! player may have created, counted by player id whatever the connection.

use std::collections::HashMap;
use std::sync::Arc;

use crate::protocol::{ErrorCode, ProtoError};
use crate::room::Matchup;

/// How many unfinished rooms one player may have created (`limits.rooms_per_player`,
/// `limits.bot_rooms_per_player`, `limits.bot_games_per_player`), so that one client cannot take
/// every room or every bot slot.
#[derive(Clone, Copy, Debug)]
pub struct PlayerCaps {
    /// Rooms of any kind.
    pub rooms: usize,
    /// Rooms with a bot in both seats.
    pub bot_rooms: usize,
    /// Rooms with one bot seat.
    pub bot_games: usize,
}

impl Default for PlayerCaps {
    fn default() -> Self {
        PlayerCaps::NONE
    }
}

impl PlayerCaps {
    /// No cap below the server's (tests and tools that open rooms by the hundred).
    pub const NONE: PlayerCaps = PlayerCaps {
        rooms: usize::MAX,
        bot_rooms: usize::MAX,
        bot_games: usize::MAX,
    };
}

impl From<&crate::config::Limits> for PlayerCaps {
    fn from(l: &crate::config::Limits) -> PlayerCaps {
        PlayerCaps {
            rooms: l.rooms_per_player,
            bot_rooms: l.bot_rooms_per_player,
            bot_games: l.bot_games_per_player,
        }
    }
}

/// A player's unfinished rooms, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    rooms: usize,
    bot_rooms: usize,
    bot_games: usize,
}

impl Counts {
    /// Counts one more room of `matchup`.
    pub fn add(&mut self, matchup: Matchup) {
        self.rooms += 1;
        match matchup {
            Matchup::People => {}
            Matchup::AgainstBot => self.bot_games += 1,
            Matchup::BotVsBot => self.bot_rooms += 1,
        }
    }
    fn sub(&mut self, matchup: Matchup) {
        self.rooms -= 1;
        match matchup {
            Matchup::People => {}
            Matchup::AgainstBot => self.bot_games -= 1,
            Matchup::BotVsBot => self.bot_rooms -= 1,
        }
    }
}

/// Who created each unfinished room, and what each player has. A room is counted from
/// `open_room` until its game finishes or it closes, whichever comes first; `release` removes its
/// claim, so it is uncounted exactly once. Rooms restored after a restart are counted for
/// nobody: the store keeps the seats, not who created the room.
#[derive(Default)]
pub(super) struct Claims {
    by_room: HashMap<Arc<str>, (Arc<str>, Matchup)>,
    by_player: HashMap<Arc<str>, Counts>,
}

impl Claims {
    /// Counts room `id` for `player` unless that would pass one of `caps`, with the rooms
    /// `elsewhere` (the player's on other nodes of a cluster) counted too.
    pub(super) fn claim(
        &mut self,
        caps: &PlayerCaps,
        id: Arc<str>,
        player: &Arc<str>,
        matchup: Matchup,
        elsewhere: Counts,
    ) -> Result<(), ProtoError> {
        let here = self.by_player.get(player).copied().unwrap_or_default();
        let now = Counts {
            rooms: here.rooms + elsewhere.rooms,
            bot_rooms: here.bot_rooms + elsewhere.bot_rooms,
            bot_games: here.bot_games + elsewhere.bot_games,
        };
        let over = |what: &str, cap: usize| {
            ProtoError::new(
                ErrorCode::TooManyRoomsForPlayer,
                format!(
                    "you have as many unfinished {what} as one player may have ({cap}); finish one first"
                ),
            )
        };
        if now.rooms >= caps.rooms {
            return Err(over("rooms", caps.rooms));
        }
        match matchup {
            Matchup::BotVsBot if now.bot_rooms >= caps.bot_rooms => {
                return Err(over("bot-vs-bot rooms", caps.bot_rooms));
            }
            Matchup::AgainstBot if now.bot_games >= caps.bot_games => {
                return Err(over("games against bots", caps.bot_games));
            }
            _ => {}
        }
        self.by_player
            .entry(player.clone())
            .or_default()
            .add(matchup);
        self.by_room.insert(id, (player.clone(), matchup));
        Ok(())
    }

    /// Uncounts room `id` if it is still counted; returns whose it was.
    pub(super) fn release(&mut self, id: &str) -> Option<Arc<str>> {
        let (player, matchup) = self.by_room.remove(id)?;
        if let Some(c) = self.by_player.get_mut(&player) {
            c.sub(matchup);
            if c.rooms == 0 {
                self.by_player.remove(&player);
            }
        }
        Some(player)
    }
}
