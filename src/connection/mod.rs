//! One task per WebSocket connection: a reader (this task: parse, rate-limit, dispatch) and a
//! writer (a second task draining a bounded queue into the socket and sending the close frame).
//! The reader's one timer also paces the heartbeat: every `heartbeat` it queues a ping for the
//! writer. When either ends, the other is stopped and the rooms are told.
//!
//! Everyone else reaches a connection through its [`ClientHandle`], whose `send` never waits: a
//! client whose queue is full has fallen too far behind and is closed, so it can never stall a
//! room or other clients. The close codes are in [`client`](crate::client).
//!
//! The writer task is in `writer.rs`; this file is the reader and the connection's life.

mod accounts;
mod dispatch;
mod writer;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use crate::client::{
    ClientHandle, CLOSE_GOING_AWAY, CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_BIG, READER,
};
use crate::lobby::Session;
use crate::protocol::{encode_error, parse, ErrorCode, ProtoError};
use crate::room::{RoomCmd, RoomHandle};
use crate::Server;

/// A token bucket: `rate` messages per second, bursts of `burst`.
struct Bucket {
    tokens: f64,
    rate: f64,
    burst: f64,
    at: Instant,
}

impl Bucket {
    fn take(&mut self) -> bool {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.at).as_secs_f64() * self.rate).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
    fn full(&self) -> bool {
        self.tokens >= self.burst - 1.0
    }
}

enum Admit {
    Handle,
    Refused,
    Close,
}

struct Conn {
    server: Arc<Server>,
    client: ClientHandle,
    session: Option<Arc<Session>>,
    /// Rooms this connection is in (as player or spectator), with their handles: a move goes
    /// straight to its room, without a lookup in the lobby's map.
    rooms: HashMap<Arc<str>, RoomHandle>,
    bucket: Bucket,
    /// Chat lines, over all the connection's rooms (`[chat]`).
    chat_bucket: Bucket,
    /// Messages refused in a row by the rate limit.
    strikes: u32,
    /// The client's address, when known: login attempts count against it.
    ip: Option<IpAddr>,
}

/// Serves one upgraded WebSocket until it closes.
pub async fn serve<S>(server: Arc<Server>, ws: WebSocketStream<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    serve_from(server, ws, None).await
}

/// [`serve`] for a client at `ip`, whose login attempts count against that address.
pub async fn serve_from<S>(server: Arc<Server>, ws: WebSocketStream<S>, ip: Option<IpAddr>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let cfg = &server.config;
    let conn_id = server.next_id();
    server.metrics.connections.fetch_add(1, Relaxed);
    server.metrics.connections_total.fetch_add(1, Relaxed);
    let (client, rx) = ClientHandle::bounded(
        conn_id,
        cfg.limits.send_queue,
        cfg.limits.send_queue_bytes,
        server.metrics.clone(),
    );
    // Registered for the shutdown, which closes every registered connection; one that registers
    // after that pass sees the token cancelled here.
    server.add_connection(client.clone());
    if server.shutdown.is_cancelled() {
        client.close(CLOSE_GOING_AWAY, "server shutting down");
    }
    let (sink, mut stream) = ws.split();
    let writer = server.tracker.spawn(writer::write_loop(
        sink,
        rx,
        client.kick(),
        client.queued_bytes(),
    ));
    let mut conn = Conn {
        bucket: Bucket {
            tokens: cfg.limits.rate_burst as f64,
            rate: cfg.limits.rate_per_sec,
            burst: cfg.limits.rate_burst as f64,
            at: Instant::now(),
        },
        chat_bucket: Bucket {
            tokens: cfg.chat.burst as f64,
            rate: f64::from(cfg.chat.per_minute) / 60.0,
            burst: cfg.chat.burst as f64,
            at: Instant::now(),
        },
        server: server.clone(),
        client,
        session: None,
        rooms: HashMap::new(),
        strikes: 0,
        ip,
    };
    tracing::debug!(conn = conn_id, "connection open");
    let open = conn.read_loop(&mut stream).await;
    conn.cleanup().await;
    server.remove_connection(conn_id);
    let _ = writer.await;
    // After the writer, so that the close frame has gone out: from then on tungstenite answers
    // no more pings, and a ping flood gets nothing while it is read away. Not during a shutdown,
    // which would otherwise wait for every client that does not answer.
    if open {
        tokio::select! {
            _ = linger(&mut stream) => {}
            _ = server.shutdown.cancelled() => {}
        }
    }
    tracing::debug!(conn = conn_id, "connection closed");
    server.metrics.connections.fetch_sub(1, Relaxed);
}

impl Conn {
    /// Reads until the connection must close; true if the peer may still be sending (the
    /// server decided to close, not the peer or the socket).
    async fn read_loop<St>(&mut self, stream: &mut St) -> bool
    where
        St: futures::Stream<Item = Result<Message, WsError>> + Unpin,
    {
        // Borrowed through an Arc of its own: a clone of the config (with its bot levels) in
        // every connection's task cost about 1 KiB per connection.
        let server = self.server.clone();
        let cfg = &server.config;
        let kick = self.client.kick();
        let hello_by = Instant::now() + cfg.server.handshake_timeout;
        let mut last_seen = Instant::now();
        let mut ping_at = last_seen + cfg.server.heartbeat;
        // One timer for the connection's life, for its three deadlines: the next heartbeat
        // ping, the idle timeout and (until `hello`) the handshake timeout. It is made once, not
        // once per frame (a timer registers in the timer wheel under a lock when first polled
        // and unregisters when dropped, which showed in the rooms profile, docs/performance.md),
        // and not moved at every frame: when it fires, the real deadline is worked out from the
        // last frame seen. The writer has no timer at all. A close request (the shutdown's
        // included) comes through the lock-free `kick`.
        let kicked = kick.raised(READER);
        let timer = tokio::time::sleep_until(ping_at.min(hello_by));
        tokio::pin!(kicked, timer);
        loop {
            // Frames are looked at before the timer: while frames keep coming the timer is not
            // polled once per frame. It is polled whenever the socket has nothing to read.
            tokio::select! {
                biased;
                _ = &mut kicked => return true,
                frame = stream.next() => {
                    last_seen = Instant::now();
                    match frame {
                        None => return false,
                        Some(Err(e)) => {
                            match e {
                                WsError::Capacity(_) => {
                                    self.client.close(CLOSE_TOO_BIG, "frame too large");
                                }
                                WsError::Utf8(_) => {
                                    self.client.close(1007, "invalid utf-8");
                                }
                                WsError::Protocol(_) => {
                                    self.client.close(1002, "protocol error");
                                }
                                _ => {}
                            }
                            tracing::debug!(conn = self.client.conn_id, "read ended: {e}");
                            return false;
                        }
                        Some(Ok(Message::Text(text))) => {
                            if !self.on_text(text.as_str()).await {
                                return true;
                            }
                        }
                        Some(Ok(Message::Binary(_))) => {
                            match self.admit(None) {
                                Admit::Handle => {}
                                Admit::Refused => continue,
                                Admit::Close => return true,
                            }
                            self.error(
                                ErrorCode::BadMessage,
                                "binary frames are not used: send JSON text frames",
                                None,
                            );
                        }
                        Some(Ok(Message::Close(_))) => return false,
                        // tungstenite has already queued the pong, but a ping is a message like
                        // any other for the rate limit: a ping flood is closed like any flood.
                        Some(Ok(Message::Ping(_))) => {
                            if let Admit::Close = self.admit(None) {
                                return true;
                            }
                        }
                        Some(Ok(_)) => {} // pong, raw frame
                    }
                }
                _ = &mut timer => {
                    let now = Instant::now();
                    let idle_by = last_seen + cfg.server.idle_timeout;
                    if self.session.is_none() && now >= hello_by {
                        self.client.close(CLOSE_POLICY, "hello expected");
                        return true;
                    }
                    if now >= idle_by {
                        self.client.close(CLOSE_GOING_AWAY, "heartbeat lost");
                        return true;
                    }
                    if now >= ping_at {
                        if !self.client.ping() {
                            return true;
                        }
                        ping_at = now + cfg.server.heartbeat;
                    }
                    let mut next = ping_at.min(idle_by);
                    if self.session.is_none() {
                        next = next.min(hello_by);
                    }
                    timer.as_mut().reset(next);
                }
            }
        }
    }

    fn error(&self, code: ErrorCode, message: impl Into<String>, re: Option<&Value>) {
        self.client
            .send(encode_error(&ProtoError::new(code, message), re));
    }

    /// Applies the rate limit: whether to handle the message, refuse it (a `rate_limited` error
    /// has been sent) or close the connection for flooding.
    fn admit(&mut self, re: Option<&Value>) -> Admit {
        self.server.metrics.messages_total.fetch_add(1, Relaxed);
        if self.bucket.full() {
            self.strikes = 0;
        }
        if self.bucket.take() {
            return Admit::Handle;
        }
        self.server.metrics.rate_limited_total.fetch_add(1, Relaxed);
        self.strikes += 1;
        // The `rate_limited` errors of the refusals before this one are queued ahead of the
        // close: the writer sends them, then the 1008 frame, while the reader lingers.
        if self.strikes >= self.server.config.limits.flood_close_after {
            self.client.close(CLOSE_POLICY, "flooding");
            return Admit::Close;
        }
        self.error(ErrorCode::RateLimited, "too many messages; slow down", re);
        Admit::Refused
    }

    /// Handles one text frame. False when the connection must close.
    async fn on_text(&mut self, text: &str) -> bool {
        let parsed = parse(text);
        let re = match &parsed {
            Ok((id, _)) | Err((id, _)) => id.clone(),
        };
        match self.admit(re.as_ref()) {
            Admit::Handle => {}
            Admit::Refused => return true,
            Admit::Close => return false,
        }
        match parsed {
            Err((id, why)) => {
                self.error(ErrorCode::BadMessage, why, id.as_ref());
                true
            }
            Ok((id, msg)) => {
                if let Err(e) = self.dispatch(msg, id.as_ref()).await {
                    self.client.send(encode_error(&e, id.as_ref()));
                }
                true
            }
        }
    }

    async fn cleanup(&mut self) {
        self.server.lobby.unwatch(self.client.conn_id);
        self.server.pairing.forget(self.client.conn_id);
        if let Some(session) = &self.session {
            if let Some(link) = self.server.lobby.cluster() {
                link.forget_seeker(self.client.conn_id, &session.player_id);
            }
            session.detach(self.client.conn_id);
            for (_, handle) in self.rooms.drain() {
                let _ = handle
                    .send(RoomCmd::Disconnected {
                        player_id: session.player_id.clone(),
                        conn_id: self.client.conn_id,
                    })
                    .await;
            }
        }
        self.client.close(CLOSE_NORMAL, "");
    }
}

/// How long a closing connection keeps reading (and discarding) for the client's close frame.
const LINGER: Duration = Duration::from_secs(2);

/// After the server decided to close: reads and discards until the client's close frame (the
/// handshake's end), the end of the stream, or [`LINGER`]. Closing a socket with unread data
/// in it makes the kernel send a reset, and the client would see 1006 instead of the close
/// frame the writer is sending.
async fn linger<St>(stream: &mut St)
where
    St: futures::Stream<Item = Result<Message, WsError>> + Unpin,
{
    let until_close = async {
        while let Some(Ok(m)) = stream.next().await {
            if let Message::Close(_) = m {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, until_close).await;
}
