//! The writer half of a connection: a task that drains the connection's bounded queue into the
//! socket, batching frames into one flush, turns the heartbeat's queued pings into ping frames,
//! and at the end sends what was queued before the close and the close frame itself.
//!
//! It knows the queue, the [`Kick`] that asks it to stop and the handle's count of unwritten
//! bytes, nothing else: it never reads from the socket (the reader in `mod.rs` does, and lingers
//! for the client's close frame) and never touches rooms, the lobby or the server.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use futures::SinkExt;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

use crate::client::{Kick, CLOSE_NORMAL, CLOSE_TOO_SLOW, WRITER};

/// Messages written after the one awaited before a flush (see `write_loop`).
const BATCH: usize = 63;
/// Bytes after which a batch stops taking messages: the WebSocket's write buffer
/// (`http::ws_config`), so a client that stops reading holds at most about this much outside
/// its queue, where `limits.send_queue_bytes` does not see it.
const BATCH_BYTES: usize = 8192;

/// A queued text as the frame it goes out as: the empty text is the heartbeat's ping
/// ([`ClientHandle::ping`](crate::client::ClientHandle::ping)).
fn frame(text: Utf8Bytes) -> Message {
    if text.is_empty() {
        Message::Ping(Default::default())
    } else {
        Message::Text(text)
    }
}

/// Drains the queue into the socket (the heartbeat's pings included) and sends the close frame.
/// `queued` is the handle's count of unwritten bytes, taken off here once a batch is flushed.
pub(super) async fn write_loop<Si>(
    mut sink: Si,
    mut rx: mpsc::Receiver<Utf8Bytes>,
    kick: Arc<Kick>,
    queued: Arc<AtomicUsize>,
) where
    Si: futures::Sink<Message, Error = WsError> + Unpin,
{
    // One close-request future for the whole loop (see `read_loop` in mod.rs).
    {
        let kicked = kick.raised(WRITER);
        tokio::pin!(kicked);
        loop {
            let text = tokio::select! {
                biased;
                _ = &mut kicked => break,
                m = rx.recv() => match m {
                    Some(text) => text,
                    None => break,
                },
            };
            // Whatever else is already queued goes out with it: the WebSocket buffers writes (up to
            // `http::ws_config`'s 8 KiB) and the flush sends them in one system call, not one each.
            let batch = async {
                let mut bytes = text.len();
                sink.feed(frame(text)).await?;
                for _ in 0..BATCH {
                    if bytes >= BATCH_BYTES {
                        break;
                    }
                    match rx.try_recv() {
                        Ok(text) => {
                            bytes += text.len();
                            sink.feed(frame(text)).await?
                        }
                        Err(_) => break,
                    }
                }
                sink.flush().await.map(|()| bytes)
            };
            // A client that stops reading blocks this send; a close request still gets through.
            // The batch is polled first: it usually completes at once, and the close request
            // is then not looked at twice per frame.
            tokio::select! {
                biased;
                r = batch => match r {
                    Ok(bytes) => { queued.fetch_sub(bytes, Relaxed); }
                    Err(_) => return,
                },
                _ = &mut kicked => break,
            }
        }
    }
    if let Some(&(code, reason)) = kick.get() {
        // What was queued before the close (the errors that explain it, the last events before
        // a shutdown) still goes out, briefly; a client too slow to read gets nothing more.
        if code != CLOSE_TOO_SLOW {
            let drain = async {
                while let Ok(text) = rx.try_recv() {
                    if sink.send(frame(text)).await.is_err() {
                        return;
                    }
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
        }
        if code != CLOSE_NORMAL || !reason.is_empty() {
            let frame = CloseFrame {
                code: CloseCode::from(code),
                reason: reason.into(),
            };
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                sink.send(Message::Close(Some(frame))),
            )
            .await;
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), sink.close()).await;
}
