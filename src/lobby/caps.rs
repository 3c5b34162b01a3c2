//! Per-player caps: how many unfinished rooms of each kind (any, bot-vs-bot, against a bot) one
//! player may have created, counted by player id whatever the connection; and how many one
//! client address may have created, whatever the players (new sessions are cheap).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use crate::protocol::{ErrorCode, ProtoError};
use crate::room::Matchup;

/// How many unfinished rooms one player may have created (`limits.rooms_per_player`,
/// `limits.bot_rooms_per_player`, `limits.bot_games_per_player`) and one address
/// (`limits.rooms_per_ip`), so that one client cannot take every room or every bot slot.
#[derive(Clone, Copy, Debug)]
pub struct PlayerCaps {
    /// Rooms of any kind.
    pub rooms: usize,
    /// Rooms with a bot in both seats.
    pub bot_rooms: usize,
    /// Rooms with one bot seat.
    pub bot_games: usize,
    /// Rooms of any kind created from one address (an IPv6 /64), whatever the players.
    pub per_ip: usize,
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
        per_ip: usize::MAX,
    };
}

impl From<&crate::config::Limits> for PlayerCaps {
    fn from(l: &crate::config::Limits) -> PlayerCaps {
        PlayerCaps {
            rooms: l.rooms_per_player,
            bot_rooms: l.bot_rooms_per_player,
            bot_games: l.bot_games_per_player,
            per_ip: l.rooms_per_ip.unwrap_or(usize::MAX),
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

/// Who created each unfinished room (and from where), and what each player and address has. A
/// room is counted from `open_room` until its game finishes or it closes, whichever comes first;
/// `release` removes its claim, so it is uncounted exactly once. Rooms restored after a restart
/// are counted for nobody: the store keeps the seats, not who created the room. Rooms opened
/// for players (a rematch, a pairing) count for the address of the connection that asked.
#[derive(Default)]
pub(super) struct Claims {
    by_room: HashMap<Arc<str>, Claim>,
    by_player: HashMap<Arc<str>, Counts>,
    by_ip: HashMap<IpAddr, usize>,
}

/// One unfinished room's creator, kind and address.
struct Claim {
    player: Arc<str>,
    matchup: Matchup,
    ip: Option<IpAddr>,
}

impl Claims {
    /// Counts room `id` for `player` (and its address `ip`, already a [`crate::peers::key`])
    /// unless that would pass one of `caps`, with the rooms `elsewhere` (the player's on other
    /// nodes of a cluster) counted too. An address is counted on this node only.
    pub(super) fn claim(
        &mut self,
        caps: &PlayerCaps,
        id: Arc<str>,
        player: &Arc<str>,
        matchup: Matchup,
        elsewhere: Counts,
        ip: Option<IpAddr>,
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
        if let Some(ip) = ip {
            if self.by_ip.get(&ip).is_some_and(|&n| n >= caps.per_ip) {
                return Err(ProtoError::new(
                    ErrorCode::TooManyRoomsForPlayer,
                    format!(
                        "your address has as many unfinished rooms as one address may have ({}); finish one first",
                        caps.per_ip
                    ),
                ));
            }
            *self.by_ip.entry(ip).or_default() += 1;
        }
        self.by_player
            .entry(player.clone())
            .or_default()
            .add(matchup);
        let claim = Claim {
            player: player.clone(),
            matchup,
            ip,
        };
        self.by_room.insert(id, claim);
        Ok(())
    }

    /// Uncounts room `id` if it is still counted; returns whose it was.
    pub(super) fn release(&mut self, id: &str) -> Option<Arc<str>> {
        let Claim {
            player,
            matchup,
            ip,
        } = self.by_room.remove(id)?;
        if let Some(c) = self.by_player.get_mut(&player) {
            c.sub(matchup);
            if c.rooms == 0 {
                self.by_player.remove(&player);
            }
        }
        if let Some(ip) = ip {
            if let Some(n) = self.by_ip.get_mut(&ip) {
                *n -= 1;
                if *n == 0 {
                    self.by_ip.remove(&ip);
                }
            }
        }
        Some(player)
    }
}
