//! Display names: the one place where a name a client sends becomes the name others see, and
//! where two players in one room are kept from showing the same name; and chat lines, cleaned
//! the same way.
//!
//! [`clean`] is used by `hello` (a new name, or a rename with a token). It applies Unicode NFC
//! (so a decomposed "é" and the composed one are the same name), strips zero-width characters
//! (they show nothing, so removing them changes nothing a reader sees) and surrounding
//! whitespace, and refuses what would make a name lie about itself: control characters and the
//! bidirectional controls that reorder the text around them (U+202E turns "Ann\u{202E}nnA" into
//! what reads as another name). It refuses rather than strips those, so a client learns that its
//! name was not taken as sent.
//!
//! [`distinct`] gives a seat holder whose name another seat already shows a numbered suffix.
//!
//! [`chat_line`] applies the same rules to a chat line, the other text one client sends for others
//! to read: a line break or tab becomes a space (a pasted paragraph is one line), any other
//! control or bidirectional control is refused.
//!
//! This module must never hold state or look at sessions or rooms: it only maps strings.

use unicode_normalization::UnicodeNormalization;

use crate::protocol::{ErrorCode, ProtoError};

/// Bidirectional formatting characters: embeddings and overrides (U+202A..U+202E), isolates
/// (U+2066..U+2069) and the marks (U+200E, U+200F, U+061C). See Unicode TR #9, "Explicit
/// Directional Formatting Characters".
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Characters that take no width: zero-width space, non-joiner and joiner (U+200B..U+200D), word
/// joiner (U+2060) and the zero-width no-break space / byte order mark (U+FEFF).
fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// The name to show for `raw`, or `None` when it is blank (empty or only whitespace as sent:
/// the server picks a guest name, as it always has).
///
/// Errors: `bad_message` for a control character (as before this module), `bad_name` for a
/// bidirectional control or a name of zero-width characters only, `name_too_long` over
/// `max_chars` characters (counted after NFC and stripping).
pub fn clean(raw: &str, max_chars: usize) -> Result<Option<String>, ProtoError> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let name: String = raw.nfc().filter(|c| !is_zero_width(*c)).collect();
    // Trimmed first, as names always were: a trailing newline is whitespace, not a refusal.
    let name = name.trim();
    if name.chars().any(char::is_control) {
        return Err(ProtoError::new(
            ErrorCode::BadMessage,
            "a name cannot contain control characters",
        ));
    }
    if name.chars().any(is_bidi_control) {
        return Err(ProtoError::new(
            ErrorCode::BadName,
            "a name cannot contain bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C)",
        ));
    }
    if name.is_empty() {
        return Err(ProtoError::new(
            ErrorCode::BadName,
            "a name needs at least one visible character",
        ));
    }
    if name.chars().count() > max_chars {
        return Err(ProtoError::new(
            ErrorCode::NameTooLong,
            format!("a name has at most {max_chars} characters"),
        ));
    }
    Ok(Some(name.to_string()))
}

/// The line to show for a chat `raw`: NFC, zero-width characters removed, whitespace controls
/// (line breaks, tabs) turned into spaces, trimmed.
///
/// Errors: `bad_chat` for an empty line (after the above), another control character or a
/// bidirectional control; `chat_too_long` over `max_chars` characters.
pub fn chat_line(raw: &str, max_chars: usize) -> Result<String, ProtoError> {
    let bad = |m: &str| ProtoError::new(ErrorCode::BadChat, m);
    let line: String = raw
        .nfc()
        .filter(|c| !is_zero_width(*c))
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let line = line.trim();
    if line.chars().any(char::is_control) {
        return Err(bad("a chat line cannot contain control characters"));
    }
    if line.chars().any(is_bidi_control) {
        return Err(bad(
            "a chat line cannot contain bidirectional control characters",
        ));
    }
    if line.is_empty() {
        return Err(bad("a chat line needs at least one visible character"));
    }
    if line.chars().count() > max_chars {
        return Err(ProtoError::new(
            ErrorCode::ChatTooLong,
            format!("a chat line has at most {max_chars} characters"),
        ));
    }
    Ok(line.to_string())
}

/// Whether two names would read the same: equal after lower-casing ("Ann" and "ann" are one
/// name to a reader).
pub fn same(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

/// `name` if no name in `taken` reads the same, else `name (2)`, `name (3)`, ... the first that
/// none does. The suffix may take a name past `limits.max_name_chars`: it is the server's, not
/// the player's.
pub fn distinct<'a>(name: &str, taken: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    let free = |n: &str| !taken.clone().any(|t| same(t, n));
    if free(name) {
        return None;
    }
    (2..).map(|i| format!("{name} ({i})")).find(|n| free(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(raw: &str) -> Option<ErrorCode> {
        clean(raw, 24).err().map(|e| e.code)
    }

    #[test]
    fn names_are_nfc_trimmed_and_stripped_of_zero_width_characters() {
        let composed = clean("\u{e9}lise", 24).unwrap();
        assert_eq!(clean("e\u{301}lise", 24).unwrap(), composed);
        assert_eq!(
            clean("  A\u{200B}nn\u{FEFF} ", 24).unwrap().as_deref(),
            Some("Ann")
        );
        assert_eq!(clean("   ", 24).unwrap(), None);
        assert_eq!(clean("Ann\n", 24).unwrap().as_deref(), Some("Ann"));
    }

    #[test]
    fn bidi_controls_and_invisible_names_are_refused() {
        assert_eq!(code("Ann\u{202E}nnA"), Some(ErrorCode::BadName));
        assert_eq!(code("\u{2066}x"), Some(ErrorCode::BadName));
        assert_eq!(code("\u{200B}\u{2060}"), Some(ErrorCode::BadName));
        assert_eq!(code("a\u{7}"), Some(ErrorCode::BadMessage));
    }

    #[test]
    fn the_length_is_counted_in_characters_after_normalising() {
        // Five decomposed characters are ten code points but five characters after NFC.
        let decomposed = "e\u{301}".repeat(5);
        assert_eq!(clean(&decomposed, 5).unwrap().unwrap().chars().count(), 5);
        assert_eq!(code(&"x".repeat(25)), Some(ErrorCode::NameTooLong));
    }

    #[test]
    fn chat_lines_are_cleaned_like_names_and_bounded() {
        assert_eq!(chat_line(" gg\nwp\t! ", 10).unwrap(), "gg wp !");
        assert_eq!(chat_line("e\u{301}\u{200B}", 10).unwrap(), "\u{e9}");
        let code = |raw: &str, max| chat_line(raw, max).unwrap_err().code;
        assert_eq!(code(" \u{200B} ", 10), ErrorCode::BadChat);
        assert_eq!(code("a\u{7}b", 10), ErrorCode::BadChat);
        assert_eq!(code("a\u{202E}b", 10), ErrorCode::BadChat);
        assert_eq!(code(&"x".repeat(11), 10), ErrorCode::ChatTooLong);
        assert_eq!(
            chat_line(&"\u{1EA1}".repeat(10), 10)
                .unwrap()
                .chars()
                .count(),
            10
        );
    }

    #[test]
    fn a_name_already_shown_gets_the_first_free_number() {
        let taken = ["Ann", "ann (2)"];
        assert_eq!(distinct("Bob", taken.iter().copied()), None);
        assert_eq!(
            distinct("ANN", taken.iter().copied()).as_deref(),
            Some("ANN (3)")
        );
    }
}
