//! How the rest of the server reaches one WebSocket connection: a [`ClientHandle`] queues
//! messages for its writer without ever waiting, and asks the connection to close with one of
//! the close codes below. Rooms and the lobby hold handles; only `connection` drains them.
//!
//! This module must never import the lobby, rooms or the server: it is the leaf they share.
//!
//! Close codes: 1000 normal, 1001 server shutting down / heartbeat lost, 1002 WebSocket protocol
//! violation, 1007 invalid UTF-8, 1008 flooding or no `hello` in time, 1009 frame too large,
//! 1013 too slow (its queue reached `limits.send_queue` messages or `limits.send_queue_bytes`
//! bytes), 4000 session taken over by a newer connection with the same
//! token.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::metrics::Metrics;
use crate::signal::Signal;

/// Close code: normal closure.
pub const CLOSE_NORMAL: u16 = 1000;
/// Close code: the server is going away (shutdown) or the peer stopped answering pings.
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code: policy violation (flooding, no `hello` in time).
pub const CLOSE_POLICY: u16 = 1008;
/// Close code: a frame or message over `limits.max_frame_bytes`.
pub const CLOSE_TOO_BIG: u16 = 1009;
/// Close code: the client did not read fast enough ("try again later").
pub const CLOSE_TOO_SLOW: u16 = 1013;
/// Close code: the session was resumed on another connection.
pub const CLOSE_TAKEN_OVER: u16 = 4000;
/// Close code: the account logged out everywhere (`logout_everywhere`).
pub const CLOSE_LOGGED_OUT: u16 = 4001;
/// Close code: the room moved to another node of a cluster (or the link to it was lost):
/// reconnect and resume (docs/scaling.md).
pub const CLOSE_ROOM_MOVED: u16 = 1012;

/// A close request: the code and reason of the close frame. Its reader waits in slot
/// [`READER`], its writer in [`WRITER`].
pub(crate) type Kick = Signal<(u16, &'static str), 2>;
/// The reader's slot in [`Kick`].
pub(crate) const READER: usize = 0;
/// The writer's slot in [`Kick`].
pub(crate) const WRITER: usize = 1;

/// A connection on another node of a cluster, as the node that owns a room sees it: what is
/// sent goes to that node (`crate::cluster`), which hands it to its own connection.
pub trait Forwarder: Send + Sync {
    /// Queues `bytes` for the remote connection; false if the link to its node is overwhelmed.
    fn send(&self, bytes: Utf8Bytes) -> bool;
    /// Asks the remote connection to close with `code`.
    fn close(&self, code: u16, reason: &'static str);
}

/// Where a handle's messages go.
#[derive(Clone)]
enum Sink {
    /// A connection of this process: its writer's queue.
    Local(mpsc::Sender<Utf8Bytes>),
    /// A connection of another node.
    Remote(Arc<dyn Forwarder>),
}

/// A cheap, cloneable way to send to one connection without ever waiting.
#[derive(Clone)]
pub struct ClientHandle {
    /// Unique per connection.
    pub conn_id: u64,
    tx: Sink,
    kick: Arc<Kick>,
    metrics: Arc<Metrics>,
    /// Bytes queued and not yet written to the socket: added here, taken off by the writer once
    /// a batch is flushed (so what sits in the WebSocket's write buffer still counts).
    queued: Arc<AtomicUsize>,
    /// The most `queued` may reach (`limits.send_queue_bytes`).
    max_bytes: usize,
}

impl ClientHandle {
    /// A handle and the queue its connection drains, bounded in messages only.
    pub fn new(
        conn_id: u64,
        queue: usize,
        metrics: Arc<Metrics>,
    ) -> (ClientHandle, mpsc::Receiver<Utf8Bytes>) {
        ClientHandle::bounded(conn_id, queue, usize::MAX, metrics)
    }

    /// A handle and the queue its connection drains, bounded at `queue` messages and
    /// `max_bytes` bytes not yet written.
    pub fn bounded(
        conn_id: u64,
        queue: usize,
        max_bytes: usize,
        metrics: Arc<Metrics>,
    ) -> (ClientHandle, mpsc::Receiver<Utf8Bytes>) {
        let (tx, rx) = mpsc::channel(queue);
        let handle = ClientHandle {
            conn_id,
            tx: Sink::Local(tx),
            kick: Arc::default(),
            metrics,
            queued: Arc::default(),
            max_bytes,
        };
        (handle, rx)
    }

    /// Queues a message. Returns false if the connection is gone or was just closed for being
    /// too slow (its queue was full in messages or in bytes).
    ///
    /// A message larger than the byte bound still goes out when nothing else is waiting: the
    /// bound is on what piles up, and one reply (a lobby's first page) may be large.
    pub fn send(&self, bytes: Utf8Bytes) -> bool {
        let tx = match &self.tx {
            Sink::Local(tx) => tx,
            Sink::Remote(f) => {
                if self.is_closing() {
                    return false;
                }
                if !f.send(bytes) {
                    self.too_slow("too slow: the link to its node is full");
                    return false;
                }
                return true;
            }
        };
        let len = bytes.len();
        let before = self.queued.fetch_add(len, Relaxed);
        if before > 0 && before.saturating_add(len) > self.max_bytes {
            self.queued.fetch_sub(len, Relaxed);
            self.too_slow("too slow: queued bytes over limits.send_queue_bytes");
            return false;
        }
        match tx.try_send(bytes) {
            Ok(()) => true,
            Err(e) => {
                self.queued.fetch_sub(len, Relaxed);
                if let mpsc::error::TrySendError::Full(_) = e {
                    self.too_slow("too slow: messages were not read");
                }
                false
            }
        }
    }

    /// Closes a client that fell behind (counted once, by the request that wins).
    fn too_slow(&self, reason: &'static str) {
        if self.close(CLOSE_TOO_SLOW, reason) {
            self.metrics
                .slow_clients_dropped_total
                .fetch_add(1, Relaxed);
            tracing::info!(conn = self.conn_id, reason, "dropping a slow client");
        }
    }

    /// The count of bytes queued and not yet written, which the writer takes written bytes off
    /// (it holds this, not a handle, so that the queue still closes when the handles are gone).
    pub(crate) fn queued_bytes(&self) -> Arc<AtomicUsize> {
        self.queued.clone()
    }

    /// Queues a WebSocket ping (the heartbeat). In the queue it is an empty text, which is never
    /// a message (every message is a JSON object); the writer sends it as a ping frame.
    pub(crate) fn ping(&self) -> bool {
        self.send(Utf8Bytes::default())
    }

    /// Asks the connection to close with `code`; the first request wins. True if this was it.
    pub fn close(&self, code: u16, reason: &'static str) -> bool {
        let first = self.kick.raise((code, reason));
        if let (true, Sink::Remote(f)) = (first, &self.tx) {
            f.close(code, reason);
        }
        first
    }

    /// A handle, numbered `conn_id` here, for a connection of another node that `forwarder`
    /// reaches.
    pub fn remote(conn_id: u64, forwarder: Arc<dyn Forwarder>, metrics: Arc<Metrics>) -> Self {
        ClientHandle {
            conn_id,
            tx: Sink::Remote(forwarder),
            kick: Arc::default(),
            metrics,
            queued: Arc::default(),
            max_bytes: usize::MAX,
        }
    }

    /// Whether a close was requested.
    pub fn is_closing(&self) -> bool {
        self.kick.get().is_some()
    }

    /// The close request the connection's reader and writer wait on.
    pub(crate) fn kick(&self) -> Arc<Kick> {
        self.kick.clone()
    }

    /// The close requested first (code and reason), if any.
    pub fn close_request(&self) -> Option<(u16, &'static str)> {
        self.kick.get().copied()
    }
}
