//! `[chat]`: how long a chat line may be, how fast one connection may chat, and how many lines a
//! room keeps to show those who join.

use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[chat]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawChat {
    /// Longest line, in characters (after cleaning).
    pub max_chars: usize,
    /// Lines one connection may send per minute, on average, over all its rooms.
    pub per_minute: u32,
    /// Lines one connection may send at once before `per_minute` applies.
    pub burst: u32,
    /// Lines a room keeps per channel for those who join later.
    pub history: usize,
}

impl Default for RawChat {
    fn default() -> Self {
        RawChat {
            max_chars: 280,
            per_minute: 12,
            burst: 5,
            history: 50,
        }
    }
}

/// `[chat]`, validated.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Longest line (1..=2000 characters: a line must fit a frame of `limits.max_frame_bytes`).
    pub max_chars: usize,
    /// Lines per minute per connection (>= 1).
    pub per_minute: u32,
    /// Lines at once per connection (>= 1).
    pub burst: u32,
    /// Lines kept per channel per room (>= 1).
    pub history: usize,
}

impl TryFrom<RawChat> for ChatConfig {
    type Error = ConfigError;

    fn try_from(raw: RawChat) -> Result<Self, ConfigError> {
        let RawChat {
            max_chars,
            per_minute,
            burst,
            history,
        } = raw;
        if !(1..=2000).contains(&max_chars) {
            return Err(invalid("chat.max_chars", "must be in 1..=2000"));
        }
        if per_minute == 0 {
            return Err(invalid("chat.per_minute", "must be at least 1"));
        }
        if burst == 0 {
            return Err(invalid("chat.burst", "must be at least 1"));
        }
        if history == 0 {
            return Err(invalid("chat.history", "must be at least 1"));
        }
        Ok(ChatConfig {
            max_chars,
            per_minute,
            burst,
            history,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(raw: RawChat) -> String {
        ChatConfig::try_from(raw).unwrap_err().to_string()
    }

    #[test]
    fn chat_errors_name_the_key() {
        let d = RawChat::default;
        assert_eq!(
            err(RawChat {
                max_chars: 0,
                ..d()
            }),
            "chat.max_chars: must be in 1..=2000"
        );
        assert_eq!(
            err(RawChat {
                max_chars: 2001,
                ..d()
            }),
            "chat.max_chars: must be in 1..=2000"
        );
        assert_eq!(
            err(RawChat {
                per_minute: 0,
                ..d()
            }),
            "chat.per_minute: must be at least 1"
        );
        assert_eq!(
            err(RawChat { burst: 0, ..d() }),
            "chat.burst: must be at least 1"
        );
        assert_eq!(
            err(RawChat { history: 0, ..d() }),
            "chat.history: must be at least 1"
        );
        let ok = ChatConfig::try_from(d()).unwrap();
        assert_eq!(
            (ok.max_chars, ok.per_minute, ok.burst, ok.history),
            (280, 12, 5, 50)
        );
    }
}
