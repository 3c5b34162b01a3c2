//! The sending side of a store's writer, shared by the SQLite store (a writer thread, a std
//! channel) and the PostgreSQL one (a writer task, a tokio channel): `record` queues an event
//! and hands back the [`Commit`] its writer will resolve, `flush` waits for everything queued,
//! `close` lets the writer finish what is queued and stop.

use std::sync::mpsc;

use parking_lot::Mutex;
use tokio::sync::{mpsc as tmpsc, oneshot};

use super::{now_ms, Commit, StoreEvent};

/// What a store sends its writer.
pub(super) enum Msg {
    /// An event to write, stamped with the time it was recorded; `done` hears whether the
    /// transaction that wrote it committed (`None`: nobody waits).
    Event {
        event: StoreEvent,
        at: i64,
        done: Option<oneshot::Sender<Result<(), String>>>,
    },
    /// Answered once everything queued before it is written.
    Flush(mpsc::Sender<()>),
    /// The room closed on this node: after the events queued before it (still written under
    /// the room's fence), the store lets the fence go. Only the PostgreSQL writer holds fences.
    Release(String),
}

/// A channel into a writer.
pub(super) trait Channel: Send {
    /// Whether the writer took `msg` (false: it has stopped).
    fn push(&self, msg: Msg) -> bool;
}

impl Channel for mpsc::Sender<Msg> {
    fn push(&self, msg: Msg) -> bool {
        self.send(msg).is_ok()
    }
}

impl Channel for tmpsc::UnboundedSender<Msg> {
    fn push(&self, msg: Msg) -> bool {
        self.send(msg).is_ok()
    }
}

/// A store's handle on its writer: empty before the writer starts and after `close`.
pub(super) struct Writer<C> {
    tx: Mutex<Option<C>>,
}

impl<C: Channel> Writer<C> {
    pub(super) fn new(tx: Option<C>) -> Writer<C> {
        Writer { tx: Mutex::new(tx) }
    }

    /// Hands the writer its channel (a writer started after the store was built).
    pub(super) fn start(&self, tx: C) {
        *self.tx.lock() = Some(tx);
    }

    fn push(&self, msg: Msg) -> bool {
        match &*self.tx.lock() {
            Some(tx) => tx.push(msg),
            None => false,
        }
    }

    /// Queues `event`; the commit resolves when its transaction does.
    pub(super) fn record(&self, event: StoreEvent) -> Commit {
        let (done, rx) = oneshot::channel();
        let msg = Msg::Event {
            event,
            at: now_ms(),
            done: Some(done),
        };
        if !self.push(msg) {
            tracing::error!("store: the writer has stopped; event not recorded");
        }
        // When the send failed, `rx` resolves to an error: the waiter learns it is not durable.
        Commit::pending(rx)
    }

    /// Queues the release of room `room_id`'s fence, after what is queued for it.
    pub(super) fn release(&self, room_id: &str) {
        self.push(Msg::Release(room_id.to_string()));
    }

    /// Waits until everything queued so far is written.
    pub(super) fn flush(&self) {
        let (done, rx) = mpsc::channel();
        if self.push(Msg::Flush(done)) {
            let _ = rx.recv();
        }
    }

    /// Closes the channel: the writer writes what is queued, then ends.
    pub(super) fn close(&self) {
        self.tx.lock().take();
    }
}

/// Tells every waiter of a written batch how its transaction ended.
pub(super) fn answer(batch: Vec<Msg>, result: &Result<(), String>) {
    answer_each(batch, |_| result.clone())
}

/// Tells each waiter of a written batch how its event ended: `result(i)` for the `i`th message.
pub(super) fn answer_each(batch: Vec<Msg>, result: impl Fn(usize) -> Result<(), String>) {
    for (i, m) in batch.into_iter().enumerate() {
        let result = &result(i);
        match m {
            Msg::Event {
                done: Some(done), ..
            } => {
                let _ = done.send(result.clone());
            }
            Msg::Event { done: None, .. } => {}
            Msg::Flush(done) => {
                let _ = done.send(());
            }
            Msg::Release(_) => {}
        }
    }
}
