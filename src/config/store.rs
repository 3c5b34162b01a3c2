//! `[store]`: where games are persisted.

use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[store]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawStore {
    /// SQLite file, or `:memory:` for no persistence.
    pub path: String,
}

impl Default for RawStore {
    fn default() -> RawStore {
        RawStore {
            path: "data/caro-arena.db".into(),
        }
    }
}

/// `[store]`, validated.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The game database: a SQLite file path, or `:memory:` (no persistence, for tests). Never
    /// blank.
    pub path: String,
}

impl TryFrom<RawStore> for StoreConfig {
    type Error = ConfigError;

    fn try_from(raw: RawStore) -> Result<Self, ConfigError> {
        if raw.path.trim().is_empty() {
            return Err(invalid(
                "store.path",
                "must not be empty (use \":memory:\" to run without persistence)",
            ));
        }
        Ok(StoreConfig { path: raw.path })
    }
}
