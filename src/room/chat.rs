//! A room's chat: two channels, each a bounded log, and who may read which.
//!
//! The seated players speak in the players' channel, which everyone in the room reads and the
//! store keeps with the game (its replay shows it). Everyone else speaks in the spectators'
//! channel, which the players do not read while they play (as on lichess: advice and comments
//! from the crowd stay out of the game); once the game is over they read it too. Before the
//! game starts there is no game to keep a line with: the players' lines are shown, not stored.
//!
//! This module decides and remembers; the room sends (see `actor`). Lines are not game events:
//! they take no `seq`, and `sync` does not replay them (`room_joined` carries the log).

use std::collections::VecDeque;

use crate::protocol::{ChatChannel, ChatLine, Seat};

/// The two channels' recent lines.
pub(super) struct Chat {
    /// Each line with its number in the room (both channels counted), which orders them.
    players: VecDeque<(u64, ChatLine)>,
    spectators: VecDeque<(u64, ChatLine)>,
    said: u64,
    /// Lines kept per channel.
    keep: usize,
}

impl Chat {
    pub(super) fn new(keep: usize) -> Chat {
        Chat {
            players: VecDeque::new(),
            spectators: VecDeque::new(),
            said: 0,
            keep,
        }
    }

    /// The channel a member speaks in: the players' for a seat holder.
    pub(super) fn channel_of(seat: Option<Seat>) -> ChatChannel {
        match seat {
            Some(_) => ChatChannel::Players,
            None => ChatChannel::Spectators,
        }
    }

    /// Whether a member (seated or not) reads `channel` now.
    pub(super) fn reads(channel: ChatChannel, seat: Option<Seat>, game_over: bool) -> bool {
        match channel {
            ChatChannel::Players => true,
            ChatChannel::Spectators => seat.is_none() || game_over,
        }
    }

    /// Remembers a line, forgetting the channel's oldest past `keep`.
    pub(super) fn push(&mut self, line: ChatLine) {
        let log = match line.channel {
            ChatChannel::Players => &mut self.players,
            ChatChannel::Spectators => &mut self.spectators,
        };
        if log.len() == self.keep {
            log.pop_front();
        }
        self.said += 1;
        log.push_back((self.said, line));
    }

    /// The lines a member may read, in the order the room took them.
    pub(super) fn visible(&self, seat: Option<Seat>, game_over: bool) -> Vec<ChatLine> {
        let mut lines: Vec<&(u64, ChatLine)> = self.players.iter().collect();
        if Self::reads(ChatChannel::Spectators, seat, game_over) {
            lines.extend(self.spectators.iter());
            lines.sort_by_key(|(n, _)| *n);
        }
        lines.into_iter().map(|(_, l)| l.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(channel: ChatChannel, text: &str, at: i64) -> ChatLine {
        ChatLine {
            channel,
            from: "Ann".into(),
            seat: (channel == ChatChannel::Players).then_some(Seat::X),
            text: text.into(),
            at,
        }
    }

    fn texts(lines: Vec<ChatLine>) -> Vec<String> {
        lines.iter().map(|l| l.text.to_string()).collect()
    }

    #[test]
    fn players_read_the_spectators_only_once_the_game_is_over() {
        let mut chat = Chat::new(10);
        // The same millisecond: the order taken is the order shown.
        chat.push(line(ChatChannel::Players, "hi", 1));
        chat.push(line(ChatChannel::Spectators, "X is lost", 1));
        chat.push(line(ChatChannel::Players, "gl", 1));
        assert_eq!(texts(chat.visible(Some(Seat::O), false)), ["hi", "gl"]);
        assert_eq!(
            texts(chat.visible(Some(Seat::O), true)),
            ["hi", "X is lost", "gl"]
        );
        assert_eq!(texts(chat.visible(None, false)), ["hi", "X is lost", "gl"]);
    }

    #[test]
    fn each_channel_keeps_its_newest_lines() {
        let mut chat = Chat::new(2);
        for (i, t) in ["a", "b", "c"].into_iter().enumerate() {
            chat.push(line(ChatChannel::Players, t, i as i64));
        }
        chat.push(line(ChatChannel::Spectators, "s", 9));
        assert_eq!(texts(chat.visible(None, false)), ["b", "c", "s"]);
    }
}
