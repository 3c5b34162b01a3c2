//! Stores that keep nothing on disk: [`MemoryStore`] (`[store] path = ":memory:"`, for tests
//! and tools: every event in memory, the replay API answered from it) and [`NullStore`] (forgets
//! everything).
//!
//! Their commits resolve at once: they must never stand in for the SQLite store where a restart
//! has to find the games again.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::protocol::{ChatChannel, ChatLine};

use super::{
    outcome_str, reason_str, AccountEvent, Commit, GamePlayers, GameQuery, GameRecord, GameSummary,
    MoveRecord, PlayerRecord, RatingHistoryRow, RatingRow, RestoredSession, SeatRecord, Store,
    StoreAccounts, StoreError, StoreEvent, StoredAccount,
};

/// Forgets everything. Only for tests that need no record at all.
#[derive(Debug, Default)]
pub struct NullStore;

impl Store for NullStore {
    fn record(&self, _event: StoreEvent) -> Commit {
        Commit::done()
    }
}

/// Keeps every event in memory (`[store] path = ":memory:"`): no persistence, for tests and
/// tools. It answers the replay API from memory too.
#[derive(Debug, Default)]
pub struct MemoryStore {
    events: Mutex<Vec<StoreEvent>>,
    sessions: Mutex<HashMap<String, RestoredSession>>,
    accounts: Mutex<StoreAccounts>,
    /// Analyses by game id, as JSON.
    analyses: Mutex<HashMap<String, String>>,
    /// Ratings (current rows, history, registration times).
    ratings: Mutex<MemoryRatings>,
}

#[derive(Debug, Default)]
struct MemoryRatings {
    current: HashMap<(String, String), RatingRow>,
    /// (player id, row), oldest first.
    history: Vec<(String, RatingHistoryRow)>,
    joined: HashMap<String, i64>,
    /// Games whose result has been recorded: a result recorded twice applies its ratings once.
    finished: std::collections::HashSet<String>,
}

impl MemoryStore {
    /// A copy of every game event recorded so far (sessions are kept apart).
    pub fn events(&self) -> Vec<StoreEvent> {
        self.events.lock().clone()
    }

    fn games(&self) -> Vec<GameRecord> {
        let mut games: Vec<GameRecord> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (i, ev) in self.events.lock().iter().enumerate() {
            // Event order stands in for time, so the list order is stable in tests.
            let at = i as i64;
            match ev {
                StoreEvent::Created(c) => {
                    index.insert(c.room_id.clone(), games.len());
                    games.push(GameRecord {
                        summary: GameSummary {
                            id: c.room_id.clone(),
                            game: c.game.to_string(),
                            width: c.width,
                            height: c.height,
                            rule: c.rule.map(str::to_string),
                            players: GamePlayers {
                                x: c.seats[0].clone(),
                                o: c.seats[1].clone(),
                            },
                            result: None,
                            reason: None,
                            fault: None,
                            detail: None,
                            moves: 0,
                            created_at: at,
                            finished_at: None,
                            time_control: Some(c.time_control).filter(|t| t.is_clocked()),
                            casual: c.casual,
                            rated: c.rated,
                        },
                        moves: Vec::new(),
                        chat: Vec::new(),
                        seq: 0,
                    });
                }
                StoreEvent::Move {
                    room_id,
                    seq,
                    cell,
                    clock,
                    ..
                } => {
                    if let Some(g) = index.get(room_id).map(|&i| &mut games[i]) {
                        g.moves.push(MoveRecord {
                            x: cell[0],
                            y: cell[1],
                            seq: *seq,
                            at,
                            clock: *clock,
                        });
                        g.summary.moves += 1;
                        g.seq = *seq;
                    }
                }
                StoreEvent::Takeback {
                    room_id,
                    seq,
                    plies,
                } => {
                    if let Some(g) = index.get(room_id).map(|&i| &mut games[i]) {
                        let keep = g.moves.len().saturating_sub(*plies as usize);
                        g.moves.truncate(keep);
                        g.summary.moves = keep as u32;
                        g.seq = *seq;
                    }
                }
                StoreEvent::Result {
                    room_id,
                    result,
                    reason,
                    forfeit,
                    ..
                } => {
                    if let Some(g) = index.get(room_id).map(|&i| &mut games[i]) {
                        g.summary.result = Some(outcome_str(*result).into());
                        g.summary.reason = Some(reason_str(*reason).into());
                        g.summary.fault = forfeit.as_ref().map(|f| f.fault.clone());
                        g.summary.detail = forfeit.as_ref().map(|f| f.detail.clone());
                        g.summary.finished_at = Some(at);
                    }
                }
                StoreEvent::Chat {
                    room_id,
                    seat,
                    name,
                    text,
                    at,
                } => {
                    if let Some(g) = index.get(room_id).map(|&i| &mut games[i]) {
                        g.chat.push(ChatLine {
                            channel: ChatChannel::Players,
                            from: name.as_str().into(),
                            seat: Some(*seat),
                            text: text.as_str().into(),
                            at: *at,
                        });
                    }
                }
                StoreEvent::Session { .. }
                | StoreEvent::SessionsExpired { .. }
                | StoreEvent::Account(_)
                | StoreEvent::Owner { .. }
                | StoreEvent::Analysis { .. } => {}
            }
        }
        games
    }
}

impl MemoryStore {
    fn account(&self, event: AccountEvent) {
        let mut all = self.accounts.lock();
        match event {
            AccountEvent::Created {
                player_id,
                username,
                phc,
                ..
            } => {
                self.ratings
                    .lock()
                    .joined
                    .insert(player_id.clone(), super::now_ms());
                all.accounts.push(StoredAccount {
                    player_id,
                    username,
                    phc,
                })
            }
            AccountEvent::Password { player_id, phc } => {
                for a in all.accounts.iter_mut().filter(|a| a.player_id == player_id) {
                    a.phc.clone_from(&phc);
                }
            }
            AccountEvent::SessionBound {
                token_hash,
                player_id,
            } => all.tokens.push((token_hash, player_id)),
            AccountEvent::LoggedOutEverywhere { player_id } => {
                all.tokens.retain(|(_, p)| *p != player_id);
            }
        }
    }
}

impl MemoryStore {
    fn rate(&self, game_id: &str, rows: &[RatingRow]) {
        let mut r = self.ratings.lock();
        if !r.finished.insert(game_id.to_string()) {
            return;
        }
        let at = super::now_ms();
        for row in rows {
            let key = (row.player_id.clone(), row.family.clone());
            if r.current.get(&key).map_or(true, |c| row.games > c.games) {
                r.current.insert(key, row.clone());
            }
            r.history.push((
                row.player_id.clone(),
                RatingHistoryRow {
                    family: row.family.clone(),
                    game_id: game_id.to_string(),
                    at_ms: at,
                    rating: row.rating,
                    deviation: row.deviation,
                },
            ));
        }
    }
}

impl Store for MemoryStore {
    fn ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        Ok(self.ratings.lock().current.values().cloned().collect())
    }

    fn rating_history(&self, player_id: &str) -> Result<Vec<RatingHistoryRow>, StoreError> {
        Ok(self
            .ratings
            .lock()
            .history
            .iter()
            .filter(|(p, _)| p == player_id)
            .map(|(_, h)| h.clone())
            .collect())
    }

    fn player_record(&self, player_id: &str) -> Result<PlayerRecord, StoreError> {
        let mut rec = PlayerRecord {
            joined_ms: self.ratings.lock().joined.get(player_id).copied(),
            ..PlayerRecord::default()
        };
        for g in self.games() {
            let s = g.summary;
            let seat = match (&s.players.x, &s.players.o) {
                (SeatRecord::Human { player_id: p, .. }, _) if p == player_id => "x",
                (_, SeatRecord::Human { player_id: p, .. }) if p == player_id => "o",
                _ => continue,
            };
            if s.reason.as_deref() == Some("aborted") {
                continue;
            }
            match s.result.as_deref() {
                Some("draw") => rec.draws += 1,
                Some(r) if r == seat => rec.wins += 1,
                Some(_) => rec.losses += 1,
                None => {}
            }
        }
        Ok(rec)
    }

    fn accounts(&self) -> Result<StoreAccounts, StoreError> {
        Ok(self.accounts.lock().clone())
    }

    fn record(&self, event: StoreEvent) -> Commit {
        match event {
            StoreEvent::Session {
                token_hash,
                player_id,
                name,
            } => {
                self.sessions.lock().insert(
                    token_hash.clone(),
                    RestoredSession {
                        token_hash,
                        player_id,
                        name,
                    },
                );
            }
            // Nothing here is read back at start (memory does not survive a restart).
            StoreEvent::SessionsExpired { .. } | StoreEvent::Owner { .. } => {}
            StoreEvent::Account(a) => self.account(a),
            StoreEvent::Analysis { game_id, json, .. } => {
                self.analyses.lock().insert(game_id, json);
            }
            StoreEvent::Result {
                ref room_id,
                ref ratings,
                ..
            } => {
                self.rate(room_id, ratings);
                self.events.lock().push(event);
            }
            other => self.events.lock().push(other),
        }
        Commit::done()
    }

    fn list_games(&self, q: &GameQuery) -> Result<Vec<GameSummary>, StoreError> {
        let mut v: Vec<GameSummary> = self
            .games()
            .into_iter()
            .map(|g| g.summary)
            .filter(|s| {
                s.finished_at
                    .is_some_and(|f| q.before.as_ref().map_or(true, |c| c.admits(f, &s.id)))
            })
            .filter(|s| {
                q.player.as_deref().map_or(true, |p| {
                    [&s.players.x, &s.players.o]
                        .iter()
                        .any(|r| matches!(r, SeatRecord::Human { player_id, .. } if player_id == p))
                })
            })
            .collect();
        v.sort_by(|a, b| (b.finished_at, &b.id).cmp(&(a.finished_at, &a.id)));
        v.truncate(q.limit as usize);
        Ok(v)
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        Ok(self.games().into_iter().find(|g| g.summary.id == id))
    }

    fn analysis(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self.analyses.lock().get(id).cloned())
    }
}
