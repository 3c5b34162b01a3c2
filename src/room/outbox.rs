//! A room's outgoing events: the `seq` numbering and the history `sync` replays from, the store
//! commits of the current turn and what waits for them ("durable before acknowledged", see
//! `src/store/mod.rs`), and the fan-out of one serialization to every member.
//!
//! The contract kept here: while a store write of this turn of the room's loop is pending, no
//! broadcast and no `left` goes out ([`Outbox::hold`], [`Outbox::hold_leave`]); [`Outbox::settle`]
//! waits for the writes and releases them in order, or, if the store failed, drops them. This
//! module never decides what happens in the game: the actor records events, and applies the
//! members a send found too slow ([`Dropped`]).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::seats::{Occupant, Seats};
use crate::protocol::{encode, with_re, ProtoError, Seat, ServerMsg};
use crate::store::{Commit, Store, StoreError, StoreEvent};

/// The member whose message caused an event, and its copy of the event carrying `re`.
pub(super) type Ack = Option<(Arc<str>, Utf8Bytes)>;

/// Members whose queue was full during a send (player id, connection id): the actor treats
/// them as disconnected.
pub(super) type Dropped = Vec<(Arc<str>, u64)>;

/// How a `leave` is answered.
pub(super) type LeaveReply = oneshot::Sender<Result<(), ProtoError>>;

/// What a settled turn lets out, in order.
pub(super) struct Released {
    /// Broadcasts, each with its acknowledged member.
    pub(super) held: Vec<(Utf8Bytes, Ack)>,
    /// Answers to `leave`.
    pub(super) leaves: Vec<(LeaveReply, Result<(), ProtoError>)>,
}

/// Where a `sync` can resume.
pub(super) enum Replay<'a> {
    /// The events after the client's `since_seq`, oldest first.
    Events(Box<dyn Iterator<Item = &'a Utf8Bytes> + 'a>),
    /// Too far back (or ahead): the client gets the whole state instead.
    Snapshot,
}

/// Numbering, history and held messages of one room.
pub(super) struct Outbox {
    /// The last event's number.
    seq: u64,
    history: VecDeque<(u64, Utf8Bytes)>,
    /// Events kept for `sync`.
    history_events: usize,
    /// Store commits of this turn of the loop: messages in `held` go out once they resolve.
    pending: Vec<Commit>,
    /// Broadcasts waiting for `pending` (durable before acknowledged): the shared bytes, and
    /// the acknowledged member with its copy carrying `re`.
    held: Vec<(Utf8Bytes, Ack)>,
    /// Answers to `leave` waiting for `pending`: leaving a game in progress resigns it, and
    /// `left` must not go out before the result is on disk.
    held_leaves: Vec<(LeaveReply, Result<(), ProtoError>)>,
}

impl Outbox {
    /// No events yet; `history_events` kept for `sync`.
    pub(super) fn new(history_events: usize) -> Outbox {
        Outbox {
            seq: 0,
            history: VecDeque::new(),
            history_events,
            pending: Vec::new(),
            held: Vec::new(),
            held_leaves: Vec::new(),
        }
    }

    /// The last event's number.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// Numbering resumes after `seq` (a stored event of a restored game).
    pub(super) fn restored(&mut self, seq: u64) {
        self.seq = self.seq.max(seq);
    }

    /// Hands an event to the store; its commit joins this turn's pending writes.
    pub(super) fn store(&mut self, store: &dyn Store, event: StoreEvent) {
        let commit = store.record(event);
        if commit.is_pending() {
            self.pending.push(commit);
        }
    }

    /// Holds `bytes` while a write of this turn is pending; otherwise gives them back to send
    /// now.
    pub(super) fn hold(&mut self, bytes: Utf8Bytes, ack: Ack) -> Option<(Utf8Bytes, Ack)> {
        if !self.pending.is_empty() {
            self.held.push((bytes, ack));
            return None;
        }
        Some((bytes, ack))
    }

    /// Holds a `leave`'s answer while a write of this turn is pending; otherwise answers now.
    pub(super) fn hold_leave(&mut self, reply: LeaveReply, result: Result<(), ProtoError>) {
        if self.pending.is_empty() {
            let _ = reply.send(result);
        } else {
            self.held_leaves.push((reply, result));
        }
    }

    /// Appends an event of the game record (it gets the next `seq`) to the history. The
    /// member `ack` (whose message caused the event) gets its copy with `re`, everyone else the
    /// same shared bytes. Returns them to send now, or `None` if held.
    pub(super) fn record(
        &mut self,
        seats: &Seats,
        make: impl FnOnce(u64) -> ServerMsg,
        ack: Option<(&str, &Value)>,
    ) -> Option<(Utf8Bytes, Ack)> {
        self.seq += 1;
        let msg = make(self.seq);
        let bytes = encode(&msg, None);
        self.history.push_back((self.seq, bytes.clone()));
        while self.history.len() > self.history_events {
            self.history.pop_front();
        }
        // The mover's copy is the shared bytes with `re` spliced in (one serialization), and
        // its key the member map's own Arc (no allocation).
        let ack = ack.map(|(acked, re)| {
            let key = match seats.members().get_key_value(acked) {
                Some((k, _)) => k.clone(),
                None => Arc::<str>::from(acked),
            };
            (key, with_re(&bytes, re))
        });
        self.hold(bytes, ack)
    }

    /// Waits for this turn's store commits and gives back what they held. If the store failed,
    /// the held messages are dropped (the game can no longer keep its promise; the actor
    /// closes the room without announcing them) and the error returned.
    pub(super) async fn settle(&mut self) -> Result<Released, StoreError> {
        let mut failed = None;
        for commit in std::mem::take(&mut self.pending) {
            if let Err(e) = commit.wait().await {
                failed = Some(e);
            }
        }
        if let Some(e) = failed {
            self.held.clear();
            // Dropped: the leaver is told the room is gone, not that it resigned durably.
            self.held_leaves.clear();
            return Err(e);
        }
        Ok(Released {
            held: std::mem::take(&mut self.held),
            leaves: std::mem::take(&mut self.held_leaves),
        })
    }

    /// Where a `sync` from `since_seq` resumes. A replay must fit the client's queue with room
    /// to spare (`limit` events), or the sync itself would get the client closed as too slow: a
    /// long gap is cheaper as a snapshot anyway.
    pub(super) fn replay(&self, since_seq: u64, limit: u64) -> Replay<'_> {
        let first_kept = self.history.front().map_or(self.seq + 1, |(s, _)| *s);
        let too_long = self.seq.saturating_sub(since_seq) > limit;
        if since_seq > self.seq || since_seq + 1 < first_kept || too_long {
            return Replay::Snapshot;
        }
        Replay::Events(Box::new(
            self.history
                .iter()
                .filter(move |(s, _)| *s > since_seq)
                .map(|(_, b)| b),
        ))
    }
}

/// Sends `bytes` to every member, `ack`'s member getting its own copy, the seated players
/// first: the player who moves next must not wait behind a crowd of spectators (fanout
/// scenario, docs/performance.md). Returns the members whose queue was full.
/// Members are told apart by their key's pointer, not its text: `ack`'s key is the member
/// map's own `Arc` (see [`Outbox::record`]), and this loop runs once per spectator.
pub(super) fn fan_out(
    seats: &Seats,
    bytes: &Utf8Bytes,
    mut ack: Option<(&Arc<str>, Utf8Bytes)>,
) -> Dropped {
    // The acknowledged member's copy is handed over, not cloned: it goes to one queue.
    let mut copy = |pid: &Arc<str>| match ack.take() {
        Some((acked, with_re)) if Arc::ptr_eq(pid, acked) => with_re,
        other => {
            ack = other;
            bytes.clone()
        }
    };
    let members = seats.members();
    let mut dropped = Vec::new();
    let mut seated: [Option<&Arc<str>>; 2] = [None, None];
    for seat in Seat::BOTH {
        if let Occupant::Human(h) = seats.occupant(seat) {
            if let Some((pid, m)) = members.get_key_value(&h.player_id) {
                if m.seat.is_some() {
                    seated[seat.index()] = Some(pid);
                    if !m.client.send(copy(pid)) {
                        dropped.push((pid.clone(), m.client.conn_id));
                    }
                }
            }
        }
    }
    for (pid, m) in members {
        if seated.iter().flatten().any(|s| Arc::ptr_eq(s, pid)) {
            continue;
        }
        if !m.client.send(copy(pid)) {
            dropped.push((pid.clone(), m.client.conn_id));
        }
    }
    dropped
}
