//! A WebSocket client of the protocol: connect over loopback TCP, say hello, wait for a reply of
//! a given type. Scenarios build on these and keep their own loops.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use crate::wire;

/// A client connection.
pub type Ws = WebSocketStream<TcpStream>;

/// How long any single setup step (connect, hello, join) may take before the client gives up.
pub const STEP: Duration = Duration::from_secs(30);

/// The generator's own WebSocket buffers: small, so 10,000 clients fit beside the server.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
}

/// Opens a WebSocket to `ws://addr/ws`.
pub async fn connect(addr: SocketAddr) -> anyhow::Result<Ws> {
    let tcp = tokio::time::timeout(STEP, TcpStream::connect(addr))
        .await
        .map_err(|_| anyhow!("connect to {addr} timed out"))?
        .with_context(|| format!("connect to {addr}"))?;
    let _ = tcp.set_nodelay(true);
    let (ws, _) = tokio::time::timeout(
        STEP,
        tokio_tungstenite::client_async_with_config(
            format!("ws://{addr}/ws"),
            tcp,
            Some(ws_config()),
        ),
    )
    .await
    .map_err(|_| anyhow!("websocket handshake with {addr} timed out"))?
    .context("websocket handshake")?;
    Ok(ws)
}

/// Sends one text frame.
pub async fn send(ws: &mut Ws, text: String) -> anyhow::Result<()> {
    ws.send(Message::Text(text.into())).await.context("send")
}

/// The next text frame (pings and pongs skipped); `None` when the connection ends.
pub async fn next_text(ws: &mut Ws) -> Option<Utf8Bytes> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return Some(t),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Reads until a frame of type `ty` arrives and returns it; an `error` frame or the end of the
/// connection first is an error. Other frames are skipped.
pub async fn expect(ws: &mut Ws, ty: &str) -> anyhow::Result<Utf8Bytes> {
    let wait = async {
        loop {
            let Some(text) = next_text(ws).await else {
                bail!("connection ended while waiting for {ty}");
            };
            let Some(m) = wire::read(&text) else { continue };
            if m.ty == ty {
                return Ok(text);
            }
            if m.ty == "error" {
                bail!("error while waiting for {ty}: {text}");
            }
        }
    };
    tokio::time::timeout(STEP, wait)
        .await
        .map_err(|_| anyhow!("timed out waiting for {ty}"))?
}

/// Connects and says hello; returns the connection after `welcome`.
pub async fn hello(addr: SocketAddr, name: &str) -> anyhow::Result<Ws> {
    let mut ws = connect(addr).await?;
    send(&mut ws, wire::hello(name)).await?;
    expect(&mut ws, "welcome").await?;
    Ok(ws)
}

/// The room id of a `room_joined` frame.
pub fn room_id(joined: &str) -> anyhow::Result<String> {
    wire::read(joined)
        .and_then(|m| m.room)
        .map(|r| r.room_id)
        .ok_or_else(|| anyhow!("room_joined without room.room_id: {joined}"))
}

/// Sends a close frame and gives the peer a moment to answer; errors are ignored.
pub async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(None)).await;
}
