//! `[store]`: where games are persisted: a SQLite file (`path`, the default) or a PostgreSQL
//! database (`url`, for a cluster of nodes sharing one database; docs/scaling.md).

use serde::Deserialize;

use super::{invalid, ConfigError};

/// `[store]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawStore {
    /// SQLite file, or `:memory:` for no persistence.
    pub path: String,
    /// A PostgreSQL URL (`postgres://user:password@host:port/database`); when set, the store is
    /// PostgreSQL and `path` is not used.
    pub url: Option<String>,
}

impl Default for RawStore {
    fn default() -> RawStore {
        RawStore {
            path: "data/caro-arena.db".into(),
            url: None,
        }
    }
}

/// `[store]`, validated.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The game database: a SQLite file path, or `:memory:` (no persistence, for tests). Never
    /// blank. Not used when `url` is set.
    pub path: String,
    /// A PostgreSQL URL (`postgres://` or `postgresql://`): the store is PostgreSQL.
    pub url: Option<String>,
}

impl StoreConfig {
    /// The database as messages name it: the SQLite path, or the URL without its password.
    pub fn describe(&self) -> String {
        match &self.url {
            None => self.path.clone(),
            Some(url) => redact(url),
        }
    }
}

/// A URL with the password between `user:` and `@` replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => match rest[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
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
        if let Some(url) = &raw.url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(invalid(
                    "store.url",
                    "must be a PostgreSQL URL (postgres://user:password@host:port/database)",
                ));
            }
        }
        Ok(StoreConfig {
            path: raw.path,
            url: raw.url,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_selects_postgres_and_is_named_without_its_password() {
        let c = StoreConfig::try_from(RawStore {
            url: Some("postgres://caro:s3cret@db.internal:5432/caro".into()),
            ..RawStore::default()
        })
        .unwrap();
        assert_eq!(c.describe(), "postgres://caro:***@db.internal:5432/caro");
        let e = StoreConfig::try_from(RawStore {
            url: Some("mysql://x".into()),
            ..RawStore::default()
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("store.url: must be a PostgreSQL URL"),
            "{e}"
        );
        assert_eq!(redact("postgres://caro@h/db"), "postgres://caro@h/db");
    }
}
