//! How the rest of the server reaches one WebSocket connection: a [`ClientHandle`] queues
//! messages for its writer without ever waiting, and asks the connection to close with one of
//! the close codes below. Rooms and the lobby hold handles; only `connection` drains them.
//!
//! This module must never import the lobby, rooms or the server: it is the leaf they share.
//!
//! Close codes: 1000 normal, 1001 server shutting down / heartbeat lost, 1002 WebSocket protocol
//! violation, 1007 invalid UTF-8, 1008 flooding or no `hello` in time, 1009 frame too large,
//! 1013 too slow (queue overflow), 4000 session taken over by a newer connection with the same
//! token.

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

/// A close request: the code and reason of the close frame. Its reader waits in slot
/// [`READER`], its writer in [`WRITER`].
pub(crate) type Kick = Signal<(u16, &'static str), 2>;
/// The reader's slot in [`Kick`].
pub(crate) const READER: usize = 0;
/// The writer's slot in [`Kick`].
pub(crate) const WRITER: usize = 1;

/// A cheap, cloneable way to send to one connection without ever waiting.
#[derive(Clone)]
pub struct ClientHandle {
    /// Unique per connection.
    pub conn_id: u64,
    tx: mpsc::Sender<Utf8Bytes>,
    kick: Arc<Kick>,
    metrics: Arc<Metrics>,
}

impl ClientHandle {
    /// A handle and the queue its connection drains.
    pub fn new(
        conn_id: u64,
        queue: usize,
        metrics: Arc<Metrics>,
    ) -> (ClientHandle, mpsc::Receiver<Utf8Bytes>) {
        let (tx, rx) = mpsc::channel(queue);
        let handle = ClientHandle {
            conn_id,
            tx,
            kick: Arc::default(),
            metrics,
        };
        (handle, rx)
    }

    /// Queues a message. Returns false if the connection is gone or was just closed for being
    /// too slow (its queue was full).
    pub fn send(&self, bytes: Utf8Bytes) -> bool {
        match self.tx.try_send(bytes) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                if self.close(CLOSE_TOO_SLOW, "too slow: messages were not read") {
                    self.metrics
                        .slow_clients_dropped_total
                        .fetch_add(1, Relaxed);
                    tracing::info!(conn = self.conn_id, "dropping a slow client");
                }
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Queues a WebSocket ping (the heartbeat). In the queue it is an empty text, which is never
    /// a message (every message is a JSON object); the writer sends it as a ping frame.
    pub(crate) fn ping(&self) -> bool {
        self.send(Utf8Bytes::default())
    }

    /// Asks the connection to close with `code`; the first request wins. True if this was it.
    pub fn close(&self, code: u16, reason: &'static str) -> bool {
        self.kick.raise((code, reason))
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
