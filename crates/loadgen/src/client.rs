//! A WebSocket client of the protocol: connect over loopback TCP, say hello, wait for a reply of
//! a given type. Scenarios build on these and keep their own loops.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
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
    handshake(addr, tcp).await
}

/// Opens a WebSocket to `ws://addr/ws` from source address `from` (any of 127/8 on Linux
/// reaches a loopback server, so a few clients can look like many addresses), with the
/// socket's receive buffer set to `recv_buffer` bytes if given (a small one makes a client
/// that never reads hold the server's queue, not its own kernel buffer).
pub async fn connect_from(
    addr: SocketAddr,
    from: IpAddr,
    recv_buffer: Option<u32>,
) -> anyhow::Result<Ws> {
    let socket = match from {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    }?;
    socket
        .bind(SocketAddr::new(from, 0))
        .with_context(|| format!("bind {from}"))?;
    if let Some(n) = recv_buffer {
        socket.set_recv_buffer_size(n)?;
    }
    let tcp = tokio::time::timeout(STEP, socket.connect(addr))
        .await
        .map_err(|_| anyhow!("connect to {addr} timed out"))?
        .with_context(|| format!("connect to {addr} from {from}"))?;
    handshake(addr, tcp).await
}

/// The HTTP status of a refused upgrade (e.g. 429 from the per-address rate limit), if that is
/// why `connect` or `connect_from` failed.
pub fn refused_status(e: &anyhow::Error) -> Option<u16> {
    match e.downcast_ref::<tungstenite::Error>()? {
        tungstenite::Error::Http(resp) => Some(resp.status().as_u16()),
        _ => None,
    }
}

async fn handshake(addr: SocketAddr, tcp: TcpStream) -> anyhow::Result<Ws> {
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

/// Reads (and discards) until the server's close frame and returns its code; `None` if the
/// connection ended without one (a reset, 1006) or nothing came within `within`.
pub async fn close_code(ws: &mut Ws, within: Duration) -> Option<u16> {
    let read = async {
        loop {
            match ws.next().await? {
                Ok(Message::Close(f)) => return f.map(|f| u16::from(f.code)),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    };
    tokio::time::timeout(within, read).await.ok().flatten()
}

/// Sends a close frame and gives the peer a moment to answer; errors are ignored.
pub async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(None)).await;
}
