//! Quick pairing ("play anyone"): open seeks, matched by game, board, rule and casualness. Two
//! matching seekers are paired into a new room whose seats are held for them (colours drawn at
//! random); among several matching seeks, the one whose seeker's rating (in the family of the
//! terms, docs/ratings.md) is closest to the newcomer's is taken, the oldest on a tie or when
//! the newcomer has no rating (a guest). A seeker may ask for a bot after a delay if nobody
//! comes. Lobby watchers see the
//! open seeks (`seeks`) whenever they change, and may take one (`accept_seek`).
//!
//! A seek belongs to its connection: one per player (a new one replaces the old), gone when the
//! connection closes, when it is paired, or when cancelled. Rooms are opened through the
//! lobby, under its limits; the paired players join them like a rematch (`paired`, then
//! `join_room`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use caro_engine::Rules;
use parking_lot::Mutex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::lobby::Lobby;
use crate::protocol::{
    encode, ErrorCode, ProtoError, Seat, SeatSpec, SeekInfo, ServerMsg, TimeControl,
};
use crate::ratings::{Family, Ratings};
use crate::room::{RoomParams, SeatKind, Who};

/// What a seek asks for: two seeks match when these are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeekTerms {
    /// Game, board and rule.
    pub rules: Rules,
    /// A casual game.
    pub casual: bool,
    /// The clock: seeks match only with the same time control.
    pub time_control: TimeControl,
}

impl SeekTerms {
    /// The room these terms make, with `seats` (X then O).
    fn room(&self, seats: [SeatKind; 2]) -> RoomParams {
        RoomParams {
            rules: self.rules,
            seats,
            casual: self.casual,
            time_control: self.time_control,
        }
    }
}

/// A `seek` as the client sent it (the fields of `ClientMsg::Seek`), checked by
/// [`Pairing::request`]; in a cluster it crosses to the node that pairs (docs/scaling.md).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SeekRequest {
    /// `"caro"` or `"tictactoe"`.
    pub game: String,
    /// Board width.
    pub width: Option<i64>,
    /// Board height.
    pub height: Option<i64>,
    /// Caro rule.
    pub rule: Option<String>,
    /// A casual game.
    pub casual: bool,
    /// A bot level to play if nobody comes.
    pub bot: Option<String>,
    /// How long to wait for a person before `bot`.
    pub bot_after_ms: Option<u64>,
    /// The time control, as in `create_room`.
    pub time_control: Option<Value>,
}

/// A bot to play if nobody comes in time.
#[derive(Clone, Debug)]
pub struct Fallback {
    /// The level.
    pub level: String,
    /// How long to wait for a person.
    pub after: Duration,
}

struct Seek {
    id: u64,
    who: Who,
    terms: SeekTerms,
    /// The seeker's rating in the terms' family when it seeks (an account's); `None` for a
    /// guest or terms no family rates.
    rating: Option<i64>,
    /// When it was made: the rating gap it accepts widens with its wait.
    since: Instant,
}

/// Which of `seeks` a newcomer rated `rating` on `terms` is paired with: among the matching
/// seeks whose rating gap fits (`fits`, given the gap and how long that seek has waited), the
/// closest rating, the oldest on a tie; a seek or a newcomer without a rating fits any and
/// counts as the farthest (so a guest takes the oldest seek).
fn closest(
    seeks: &[Seek],
    terms: &SeekTerms,
    rating: Option<i64>,
    fits: impl Fn(u64, Duration) -> bool,
) -> Option<usize> {
    seeks
        .iter()
        .enumerate()
        .filter(|(_, s)| s.terms == *terms)
        .filter_map(|(i, s)| {
            let gap = match (rating, s.rating) {
                (Some(a), Some(b)) => (a - b).unsigned_abs(),
                _ => u64::MAX,
            };
            (gap == u64::MAX || fits(gap, s.since.elapsed())).then_some((gap, i))
        })
        .min()
        .map(|(_, i)| i)
}

/// The open seeks, oldest first, and what pairing opens rooms with.
pub struct Pairing {
    seeks: Mutex<Vec<Seek>>,
    next: AtomicU64,
    lobby: Arc<Lobby>,
    /// The seekers' ratings.
    ratings: Arc<Ratings>,
    /// The bot fallbacks' timers run here, so the shutdown waits for them...
    tracker: TaskTracker,
    /// ... and ends them.
    shutdown: CancellationToken,
    /// Told every change of the list (see [`Pairing::observe`]).
    observer: std::sync::OnceLock<SeeksObserver>,
}

/// What [`Pairing::observe`] is given: the `seeks` message and whether any seek is open.
pub type SeeksObserver =
    Box<dyn Fn(&tokio_tungstenite::tungstenite::Utf8Bytes, bool) + Send + Sync>;

/// How often a waiting rated seek looks again for a partner as its rating gap widens.
const WIDEN_EVERY: Duration = Duration::from_secs(1);

fn seek_id(id: u64) -> String {
    format!("s{id}")
}

impl Pairing {
    /// No seeks; rooms open in `lobby`, fallback timers on `tracker` until `shutdown`.
    pub fn new(
        lobby: Arc<Lobby>,
        ratings: Arc<Ratings>,
        tracker: TaskTracker,
        shutdown: CancellationToken,
    ) -> Pairing {
        Pairing {
            seeks: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            lobby,
            ratings,
            tracker,
            shutdown,
            observer: std::sync::OnceLock::new(),
        }
    }

    /// The open seeks as lobby watchers see them.
    pub fn list(&self) -> Vec<SeekInfo> {
        self.seeks
            .lock()
            .iter()
            .map(|s| {
                let (rules, kind) = (s.terms.rules, s.terms.rules.kind());
                SeekInfo {
                    seek_id: seek_id(s.id),
                    name: s.who.name.clone(),
                    game: kind.as_str(),
                    width: rules.width(),
                    height: rules.height(),
                    rule: (kind == caro_engine::GameKind::Caro).then(|| rules.rule().as_str()),
                    casual: s.terms.casual,
                    time_control: Some(s.terms.time_control).filter(TimeControl::is_clocked),
                    rating: s.rating,
                }
            })
            .collect()
    }

    fn tell_watchers(&self) {
        let seeks = self.list();
        let open = !seeks.is_empty();
        let bytes = encode(&ServerMsg::Seeks { seeks }, None);
        self.lobby.tell_watchers(&bytes);
        if let Some(observer) = self.observer.get() {
            observer(&bytes, open);
        }
    }

    /// Has `observer` told every change of the list (the `seeks` message, and whether any seek
    /// is open): a cluster's pairing node tells the other nodes' watchers (once; later calls
    /// are ignored).
    pub fn observe(&self, observer: SeeksObserver) {
        let _ = self.observer.set(observer);
    }

    /// A `seek` from `who`: the same checks as a room against that bot (or an open seat), then
    /// [`Pairing::seek`].
    pub fn request(
        self: &Arc<Self>,
        who: Who,
        req: SeekRequest,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let other = match &req.bot {
            Some(level) => SeatSpec::Bot { bot: level.clone() },
            None => SeatSpec::Word("open".into()),
        };
        let me = SeatSpec::Word("me".into());
        let params = self.lobby.check_params(
            &req.game,
            req.width,
            req.height,
            req.rule.as_deref(),
            &me,
            &other,
            req.time_control.as_ref(),
        )?;
        let after = req.bot_after_ms.unwrap_or(15_000);
        if after > 600_000 {
            return Err(ProtoError::new(
                ErrorCode::BadSeek,
                "bot_after_ms must be at most 600000",
            ));
        }
        let fallback = req.bot.map(|level| Fallback {
            level,
            after: Duration::from_millis(after),
        });
        let terms = SeekTerms {
            rules: params.rules,
            casual: req.casual,
            time_control: params.time_control,
        };
        self.seek(who, terms, fallback, re)
    }

    /// `who` seeks a game on `terms`: paired at once with the oldest matching seek of another
    /// player, else waiting (`seeking`), with a bot after `fallback.after` if asked.
    pub fn seek(
        self: &Arc<Self>,
        who: Who,
        terms: SeekTerms,
        fallback: Option<Fallback>,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let rating = Family::of(&terms.rules, &terms.time_control)
            .and_then(|f| self.ratings.value_of(&who.player_id, f));
        let other = {
            let mut seeks = self.seeks.lock();
            seeks.retain(|s| s.who.player_id != who.player_id);
            closest(&seeks, &terms, rating, |gap, waited| {
                gap <= self.ratings.pairing_gap(waited)
            })
            .map(|i| seeks.remove(i))
        };
        if let Some(other) = other {
            let result = self.pair(other, &who, terms, re);
            self.tell_watchers();
            return result;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.seeks.lock().push(Seek {
            id,
            who: who.clone(),
            terms,
            rating,
            since: Instant::now(),
        });
        who.client.send(encode(
            &ServerMsg::Seeking {
                seek_id: seek_id(id),
            },
            re,
        ));
        self.tell_watchers();
        if rating.is_some() {
            let pairing = self.clone();
            self.tracker.spawn(async move { pairing.widen(id).await });
        }
        if let Some(fallback) = fallback {
            let pairing = self.clone();
            self.tracker.spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep(fallback.after) => pairing.fall_back(id, &fallback.level),
                    _ = pairing.shutdown.cancelled() => {}
                }
            });
        }
        Ok(())
    }

    /// `who` takes the open seek `id` (not its own), if its terms are still open.
    pub fn accept(&self, who: Who, id: &str, re: Option<&Value>) -> Result<(), ProtoError> {
        let taken = {
            let mut seeks = self.seeks.lock();
            let i = seeks
                .iter()
                .position(|s| seek_id(s.id) == id && s.who.player_id != who.player_id)
                .ok_or_else(|| {
                    ProtoError::new(ErrorCode::NoSuchSeek, format!("no open seek {id:?}"))
                })?;
            let taken = seeks.remove(i);
            seeks.retain(|s| s.who.player_id != who.player_id);
            taken
        };
        let terms = taken.terms;
        let result = self.pair(taken, &who, terms, re);
        self.tell_watchers();
        result
    }

    /// Opens the room of `older` and `newer`, colours drawn at random, and tells both. If the
    /// room cannot be opened, `older`'s seek stays open and `newer` gets the error.
    fn pair(
        &self,
        older: Seek,
        newer: &Who,
        terms: SeekTerms,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let older_is_x = coin();
        let seats = if older_is_x {
            [held(&older.who), held(newer)]
        } else {
            [held(newer), held(&older.who)]
        };
        let handle = match self.lobby.open_held(newer, terms.room(seats)) {
            Ok(h) => h,
            Err(e) => {
                self.seeks.lock().insert(0, older);
                return Err(e);
            }
        };
        let (older_seat, newer_seat) = if older_is_x {
            (Seat::X, Seat::O)
        } else {
            (Seat::O, Seat::X)
        };
        let paired = |seat| ServerMsg::Paired {
            room_id: handle.id.to_string(),
            seat,
        };
        older.who.client.send(encode(&paired(older_seat), None));
        newer.client.send(encode(&paired(newer_seat), re));
        Ok(())
    }

    /// While the rated seek `id` waits, every second: paired with the closest other waiting
    /// seek of its terms once the gap allowed (widening with the longer wait of the two) covers
    /// their ratings. Ends when the seek does (paired, cancelled, gone) or at shutdown.
    async fn widen(&self, id: u64) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(WIDEN_EVERY) => {}
                _ = self.shutdown.cancelled() => return,
            }
            let pair = {
                let mut seeks = self.seeks.lock();
                let Some(i) = seeks.iter().position(|s| s.id == id) else {
                    return;
                };
                let (terms, rating, since) = (seeks[i].terms, seeks[i].rating, seeks[i].since);
                let others: Vec<usize> = (0..seeks.len()).filter(|&j| j != i).collect();
                let found = others
                    .into_iter()
                    .filter(|&j| seeks[j].terms == terms)
                    .filter_map(|j| {
                        let gap = (rating? - seeks[j].rating?).unsigned_abs();
                        let waited = since.elapsed().max(seeks[j].since.elapsed());
                        (gap <= self.ratings.pairing_gap(waited)).then_some((gap, j))
                    })
                    .min();
                found.map(|(_, j)| {
                    // Removed in the order that keeps the other index valid; the older first.
                    let (first, second) = if i > j { (i, j) } else { (j, i) };
                    let a = seeks.remove(first);
                    let b = seeks.remove(second);
                    if a.id < b.id {
                        (a, b)
                    } else {
                        (b, a)
                    }
                })
            };
            if let Some((older, newer)) = pair {
                let terms = older.terms;
                if let Err(e) = self.pair(older, &newer.who, terms, None) {
                    newer
                        .who
                        .client
                        .send(crate::protocol::encode_error(&e, None));
                }
                self.tell_watchers();
                return;
            }
        }
    }

    /// The seek `id` waited long enough: if still open, its seeker plays `level`.
    fn fall_back(&self, id: u64, level: &str) {
        let Some(seek) = ({
            let mut seeks = self.seeks.lock();
            seeks
                .iter()
                .position(|s| s.id == id)
                .map(|i| seeks.remove(i))
        }) else {
            return;
        };
        let (me, bot) = (held(&seek.who), SeatKind::Bot(level.to_string()));
        let me_x = coin();
        let seats = if me_x { [me, bot] } else { [bot, me] };
        match self.lobby.open_held(&seek.who, seek.terms.room(seats)) {
            Ok(handle) => {
                let msg = ServerMsg::Paired {
                    room_id: handle.id.to_string(),
                    seat: if me_x { Seat::X } else { Seat::O },
                };
                seek.who.client.send(encode(&msg, None));
            }
            Err(e) => {
                seek.who
                    .client
                    .send(crate::protocol::encode_error(&e, None));
            }
        }
        self.tell_watchers();
    }

    /// Cancels every open seek, telling each seeker `seek_cancelled` (this node no longer pairs
    /// for the cluster: docs/scaling.md, "Quick pairing").
    pub fn cancel_all(&self) {
        let gone = std::mem::take(&mut *self.seeks.lock());
        if gone.is_empty() {
            return;
        }
        let bytes = encode(&ServerMsg::SeekCancelled {}, None);
        for s in &gone {
            s.who.client.send(bytes.clone());
        }
        self.tell_watchers();
    }

    /// Cancels `player_id`'s seek; whether there was one.
    pub fn cancel(&self, player_id: &str) -> bool {
        self.withdraw(|s| &*s.who.player_id == player_id)
    }

    /// The connection `conn_id` closed: its seek goes.
    pub fn forget(&self, conn_id: u64) {
        self.withdraw(|s| s.who.client.conn_id == conn_id);
    }

    /// Removes the seeks `gone` picks, telling lobby watchers if there were any; whether there
    /// were.
    fn withdraw(&self, gone: impl Fn(&Seek) -> bool) -> bool {
        let removed = {
            let mut seeks = self.seeks.lock();
            let before = seeks.len();
            seeks.retain(|s| !gone(s));
            seeks.len() != before
        };
        if removed {
            self.tell_watchers();
        }
        removed
    }

    /// Whether no seek is open.
    pub fn is_empty(&self) -> bool {
        self.seeks.lock().is_empty()
    }
}

/// A seat held for `who`.
fn held(who: &Who) -> SeatKind {
    SeatKind::Reserved {
        player_id: who.player_id.clone(),
        name: who.name.clone(),
    }
}

/// A fair coin, from the operating system's random numbers (through a v4 UUID).
fn coin() -> bool {
    uuid::Uuid::new_v4().as_bytes()[0] & 1 == 0
}
