//! Accounts: a username and an argon2id password hash bound to a player id, and the session
//! tokens bound to an account (docs/security.md, "Accounts").
//!
//! An account *is* a player id: a guest who registers keeps its id (and so the games stored
//! under it), and logging in gives a connection a session with that id. Every account and every
//! account-bound token hash is kept in memory (loaded from the store at start, written through
//! it as [`StoreEvent::Account`]); a token the lobby no longer holds (a restart, the janitor)
//! but that is bound to an account resumes that account.
//!
//! This module never sees a password after hashing or checking it, never logs one, and never
//! stores or keeps a session token, only its SHA-256 ([`crate::store::hash_token`]). Hashing
//! runs in `spawn_blocking`: argon2id is slow on purpose.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use governor::clock::DefaultClock;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use parking_lot::Mutex;

use crate::config::Limits;
use crate::protocol::{ErrorCode, ProtoError};
use crate::store::{
    AccountClaim, AccountEvent, NewAccount, Store, StoreAccounts, StoreEvent, StoredAccount,
};

/// Shortest password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest password, in characters (argon2 takes any length; this bounds the work per attempt).
pub const MAX_PASSWORD_CHARS: usize = 128;

/// The one answer to a wrong username and to a wrong password.
const BAD_LOGIN: &str = "wrong username or password";

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

/// One account.
pub struct Account {
    /// The player id it owns.
    pub player_id: Arc<str>,
    /// The username as registered.
    pub username: Arc<str>,
    /// The argon2id PHC string.
    phc: Mutex<String>,
}

/// Every account, the tokens bound to them, and the login rate limits.
pub struct Accounts {
    /// By lowercased username: the uniqueness check is an entry in this map.
    by_key: DashMap<String, Arc<Account>>,
    by_player: DashMap<Arc<str>, Arc<Account>>,
    /// Token hash -> player id of the account it is bound to.
    tokens: DashMap<String, Arc<str>>,
    per_ip: Keyed<IpAddr>,
    per_account: Keyed<String>,
    /// Map sizes at which the rate limiters are next swept.
    sweep_ip: AtomicUsize,
    sweep_account: AtomicUsize,
    /// Checked against when the username is unknown, so that an unknown user costs the same
    /// argon2 work as a wrong password (made at the first login, not at start).
    dummy: std::sync::OnceLock<String>,
    store: Arc<dyn Store>,
}

/// The lowercased key a username is unique by.
pub fn username_key(username: &str) -> String {
    username.to_lowercase()
}

fn per_minute<K: std::hash::Hash + Eq + Clone>(n: u32) -> Keyed<K> {
    let n = NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
    RateLimiter::keyed(Quota::per_minute(n))
}

/// The smallest rate-limiter map that is swept.
const SWEEP_FLOOR: usize = 1024;

fn sweep<K: std::hash::Hash + Eq + Clone>(limiter: &Keyed<K>, next: &AtomicUsize) {
    if limiter.len() >= next.load(Relaxed) {
        limiter.retain_recent();
        limiter.shrink_to_fit();
        next.store((2 * limiter.len()).max(SWEEP_FLOOR), Relaxed);
    }
}

fn bad_login() -> ProtoError {
    ProtoError::new(ErrorCode::BadLogin, BAD_LOGIN)
}

fn taken() -> ProtoError {
    ProtoError::new(ErrorCode::UsernameTaken, "that username is taken")
}

fn already_registered() -> ProtoError {
    ProtoError::new(
        ErrorCode::AlreadyRegistered,
        "this session is already an account",
    )
}

/// An account write that failed (logged here; the client hears only that it was not saved).
fn unsaved(e: impl std::fmt::Display) -> ProtoError {
    tracing::error!("store: an account write failed: {e}");
    ProtoError::new(ErrorCode::ShuttingDown, "the account could not be saved")
}

fn too_many() -> ProtoError {
    ProtoError::new(
        ErrorCode::TooManyLogins,
        "too many login attempts; wait a minute",
    )
}

/// An argon2id PHC string of `password` with a fresh salt from the OS.
fn hash(password: &str) -> Result<String, ProtoError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| ProtoError::new(ErrorCode::BadPassword, "the password cannot be hashed"))
}

fn verify(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// Password hashes computed at once, at most: each holds 19 MiB (argon2id's memory cost) and a
/// blocking thread, so a crowd of logins from many addresses waits here instead.
pub const MAX_HASHING: usize = 4;

static HASHING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_HASHING);

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let _permit = HASHING.acquire().await.expect("never closed");
    tokio::task::spawn_blocking(f)
        .await
        .expect("a password hash does not panic")
}

/// Refuses a password outside the length bounds.
pub fn check_password(password: &str) -> Result<(), ProtoError> {
    let n = password.chars().count();
    if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&n) {
        Ok(())
    } else {
        Err(ProtoError::new(
            ErrorCode::BadPassword,
            format!("a password has {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters"),
        ))
    }
}

impl Accounts {
    /// No accounts yet, writing through `store`.
    pub fn new(store: Arc<dyn Store>, limits: &Limits) -> Accounts {
        Accounts {
            by_key: DashMap::new(),
            by_player: DashMap::new(),
            tokens: DashMap::new(),
            per_ip: per_minute(limits.logins_per_ip_per_minute),
            per_account: per_minute(limits.logins_per_account_per_minute),
            dummy: std::sync::OnceLock::new(),
            sweep_ip: AtomicUsize::new(SWEEP_FLOOR),
            sweep_account: AtomicUsize::new(SWEEP_FLOOR),
            store,
        }
    }

    /// Adds what the store kept (at start, before serving).
    pub fn load(&self, loaded: StoreAccounts) {
        let accounts = self;
        for a in loaded.accounts {
            let account = Arc::new(Account {
                player_id: a.player_id.into(),
                username: a.username.into(),
                phc: Mutex::new(a.phc),
            });
            accounts.insert(account);
        }
        for (token_hash, player_id) in loaded.tokens {
            accounts.tokens.insert(token_hash, player_id.into());
        }
    }

    /// Binds `token_hash` to `stored`, adding the account if this node does not know it yet:
    /// what another node sharing the database wrote since this one started
    /// ([`Store::account_of_token`]).
    pub fn adopt(&self, stored: StoredAccount, token_hash: String) {
        let player_id: Arc<str> = stored.player_id.into();
        if !self.by_player.contains_key(&player_id) {
            self.insert(Arc::new(Account {
                player_id: player_id.clone(),
                username: stored.username.into(),
                phc: Mutex::new(stored.phc),
            }));
        }
        self.tokens.insert(token_hash, player_id);
    }

    fn insert(&self, account: Arc<Account>) {
        self.by_player
            .insert(account.player_id.clone(), account.clone());
        self.by_key.insert(username_key(&account.username), account);
    }

    /// The account owning `player_id`.
    pub fn of_player(&self, player_id: &str) -> Option<Arc<Account>> {
        self.by_player.get(player_id).map(|a| a.value().clone())
    }

    /// The account registered as `username` (compared case-insensitively).
    pub fn of_username(&self, username: &str) -> Option<Arc<Account>> {
        self.by_key
            .get(&username_key(username))
            .map(|a| a.value().clone())
    }

    /// The account a token (by its hash) is bound to.
    pub fn of_token(&self, token_hash: &str) -> Option<Arc<Account>> {
        let player_id = self.tokens.get(token_hash)?.value().clone();
        self.of_player(&player_id)
    }

    /// Takes one login attempt from `ip` against `key`; `too_many_logins` over either limit.
    fn attempt(&self, ip: Option<IpAddr>, key: &str) -> Result<(), ProtoError> {
        // Every username tried is a key: the maps are swept of full buckets as they grow (as
        // `peers` does), so made-up usernames cannot grow them without bound.
        sweep(&self.per_ip, &self.sweep_ip);
        sweep(&self.per_account, &self.sweep_account);
        if let Some(ip) = ip {
            self.per_ip
                .check_key(&crate::peers::key(ip))
                .map_err(|_| too_many())?;
        }
        self.per_account
            .check_key(&key.to_string())
            .map_err(|_| too_many())
    }

    /// Binds a token hash to an account and waits until that is durable.
    async fn bind(&self, token_hash: &str, player_id: &Arc<str>) -> Result<(), ProtoError> {
        self.tokens
            .insert(token_hash.to_string(), player_id.clone());
        self.write(AccountEvent::SessionBound {
            token_hash: token_hash.to_string(),
            player_id: player_id.to_string(),
        })
        .await
    }

    async fn write(&self, event: AccountEvent) -> Result<(), ProtoError> {
        self.store
            .record(StoreEvent::Account(event))
            .wait()
            .await
            .map_err(unsaved)
    }

    /// Registers `username` for `player_id` (the current session's), binding `token_hash`.
    /// `username` has passed the name rules.
    pub async fn register(
        self: &Arc<Self>,
        player_id: &Arc<str>,
        token_hash: &str,
        username: String,
        password: String,
    ) -> Result<Arc<Account>, ProtoError> {
        if self.by_player.contains_key(player_id) {
            return Err(already_registered());
        }
        check_password(&password)?;
        let key = username_key(&username);
        // A shared database may know the name from another node.
        self.refresh(&key).await;
        let phc = blocking(move || hash(&password)).await?;
        let account = Arc::new(Account {
            player_id: player_id.clone(),
            username: username.into(),
            phc: Mutex::new(phc.clone()),
        });
        match self.by_key.entry(key.clone()) {
            Entry::Occupied(_) => return Err(taken()),
            Entry::Vacant(v) => {
                v.insert(account.clone());
            }
        }
        let new = NewAccount {
            player_id: player_id.to_string(),
            username: account.username.to_string(),
            username_key: key.clone(),
            phc,
        };
        // The name is reserved in memory; a shared database has the last word (another node may
        // have registered it since the refresh above).
        let store = self.store.clone();
        let claim = tokio::task::spawn_blocking({
            let new = new.clone();
            move || store.claim_account(&new).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|claim| claim);
        let refused = match claim {
            Ok(AccountClaim::Written | AccountClaim::Local) => None,
            Ok(AccountClaim::Taken) => Some(taken()),
            Ok(AccountClaim::AlreadyAccount) => Some(already_registered()),
            Err(ref e) => Some(unsaved(e)),
        };
        if let Some(refused) = refused {
            self.by_key
                .remove_if(&key, |_, held| Arc::ptr_eq(held, &account));
            // What another node wrote: a login here finds it; and when this session's player
            // registered on another node meanwhile, the session is that account here too.
            self.refresh(&key).await;
            if claim == Ok(AccountClaim::AlreadyAccount) {
                self.adopt_token(token_hash).await;
            }
            return Err(refused);
        }
        self.by_player.insert(player_id.clone(), account.clone());
        if claim == Ok(AccountClaim::Local) {
            self.write(new.into()).await?;
        }
        self.bind(token_hash, player_id).await?;
        Ok(account)
    }

    /// Checks a username and password (rate limited); the account, or `bad_login` whichever of
    /// the two was wrong.
    pub async fn login(
        &self,
        ip: Option<IpAddr>,
        username: &str,
        password: String,
    ) -> Result<Arc<Account>, ProtoError> {
        let key = username_key(username.trim());
        self.attempt(ip, &key)?;
        self.refresh(&key).await;
        let account = self.by_key.get(&key).map(|a| a.value().clone());
        let phc = account.as_ref().map(|a| a.phc.lock().clone());
        let dummy = match phc {
            Some(_) => None,
            None => Some(self.dummy.get().cloned()),
        };
        let ok = blocking(move || {
            let phc = match (phc, dummy) {
                (Some(phc), _) => phc,
                (None, Some(Some(d))) => d,
                (None, _) => hash("not a password of anyone").unwrap_or_default(),
            };
            (verify(&password, &phc), phc)
        })
        .await;
        let (ok, phc) = ok;
        if account.is_none() {
            let _ = self.dummy.set(phc);
        }
        match account {
            Some(a) if ok => Ok(a),
            _ => Err(bad_login()),
        }
    }

    /// With a shared database (a cluster), reads account `key` from the store into memory: an
    /// account another node made, or the password another node changed. Nothing for stores one
    /// node owns. A store that cannot answer leaves memory as it is.
    pub async fn refresh(&self, key: &str) {
        let (store, lookup) = (self.store.clone(), key.to_string());
        let found = tokio::task::spawn_blocking(move || store.account_by_username(&lookup)).await;
        let stored = match found {
            Ok(Ok(Some(stored))) => stored,
            Ok(Ok(None)) => return,
            Ok(Err(e)) => return tracing::warn!("store: looking up an account failed: {e}"),
            Err(e) => return tracing::warn!("store: looking up an account failed: {e}"),
        };
        match self.by_player.get(stored.player_id.as_str()) {
            Some(a) => *a.phc.lock() = stored.phc,
            None => self.insert(Arc::new(Account {
                player_id: stored.player_id.into(),
                username: stored.username.into(),
                phc: Mutex::new(stored.phc),
            })),
        }
    }

    /// Binds `token_hash` to the account the store has it bound to, if any (another node bound
    /// it, or this node before a restart). A store that cannot answer leaves memory as it is.
    pub async fn adopt_token(&self, token_hash: &str) {
        let (store, hash) = (self.store.clone(), token_hash.to_string());
        match tokio::task::spawn_blocking(move || store.account_of_token(&hash)).await {
            Ok(Ok(Some(stored))) => self.adopt(stored, token_hash.to_string()),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("store: looking up a token's account failed: {e}"),
            Err(e) => tracing::warn!("store: looking up a token's account failed: {e}"),
        }
    }

    /// A new token for `account` is bound to it.
    pub async fn new_token(&self, account: &Account, token_hash: &str) -> Result<(), ProtoError> {
        self.bind(token_hash, &account.player_id).await
    }

    /// Changes the password of `account` after checking `old` (rate limited like a login).
    pub async fn change_password(
        &self,
        ip: Option<IpAddr>,
        account: &Arc<Account>,
        old: String,
        new: String,
    ) -> Result<(), ProtoError> {
        self.attempt(ip, &username_key(&account.username))?;
        check_password(&new)?;
        let phc = account.phc.lock().clone();
        if !blocking(move || verify(&old, &phc)).await {
            return Err(bad_login());
        }
        let phc = blocking(move || hash(&new)).await?;
        *account.phc.lock() = phc.clone();
        self.write(AccountEvent::Password {
            player_id: account.player_id.to_string(),
            phc,
        })
        .await
    }

    /// Forgets every token of account `player_id` (its `logout_everywhere`, here or on another
    /// node of a cluster).
    pub fn forget_tokens(&self, player_id: &str) {
        self.tokens.retain(|_, p| &**p != player_id);
    }

    /// Unbinds every token of `account`; the caller ends their sessions.
    pub async fn logout_everywhere(&self, account: &Account) -> Result<(), ProtoError> {
        self.forget_tokens(&account.player_id);
        self.write(AccountEvent::LoggedOutEverywhere {
            player_id: account.player_id.to_string(),
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_phc_strings_with_a_salt_each() {
        let a = hash("correct horse").unwrap();
        let b = hash("correct horse").unwrap();
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b, "a fresh salt each time");
        assert!(!a.contains("correct horse"));
        assert!(verify("correct horse", &a));
        assert!(!verify("correct horsf", &a));
    }

    #[test]
    fn password_length_is_bounded_in_characters() {
        assert!(check_password("1234567").is_err());
        assert!(check_password("12345678").is_ok());
        assert!(check_password(&"é".repeat(128)).is_ok());
        assert!(check_password(&"é".repeat(129)).is_err());
    }
}
