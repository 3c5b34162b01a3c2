//! Other nodes' commands for this node's rooms: each runs on the room with a stand-in
//! `ClientHandle` for the asking connection (docs/scaling.md, "Routing commands to the owner"),
//! and the commands that want an answer get it on the asking node's inbox.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::wire::{self, Cmd, Op, Reply};
use super::Link;
use crate::client::ClientHandle;
use crate::protocol::{encode, encode_error, ErrorCode, ProtoError, ServerMsg};
use crate::room::{RoomCmd, RoomHandle, Who};
use crate::Server;

/// Runs a command from a connection of node `from` on the local room it names, answering
/// request `req` (0: no answer wanted) or the connection itself.
pub(super) async fn command(
    server: &Arc<Server>,
    link: &Arc<Link>,
    from: &str,
    req: u64,
    cmd: Cmd,
) {
    let room: Arc<str> = cmd.room.as_str().into();
    let key = (room.clone(), Arc::<str>::from(from), cmd.conn);
    if matches!(
        cmd.op,
        Op::Seek { .. } | Op::CancelSeek { .. } | Op::AcceptSeek { .. } | Op::ForgetSeeks
    ) {
        return pairing(server, link, key, cmd);
    }
    let answer = |reply: Reply| {
        let body = serde_json::to_vec(&reply).unwrap_or_default();
        link.publish(
            link.names.inbox(from),
            wire::frame(format_args!("R {req}"), &body),
        );
    };
    // A room not (or no longer) here: the answer, without a stand-in kept for it.
    let Some(entry) = server.lobby.room(&room) else {
        link.proxies.remove(&key);
        let e = ProtoError::new(ErrorCode::NoSuchRoom, format!("no room {room:?}"));
        return match cmd.op {
            Op::Join { .. } => answer(Reply::Joined(Err(e.into()))),
            Op::Leave => answer(Reply::Left(Err(e.into()))),
            Op::Reconnect => answer(Reply::Reconnected(false)),
            Op::Disconnected => {}
            op => {
                let once = link.make_proxy(key.1, key.2, server.next_id());
                once.send(encode_error(&e, op.re()));
            }
        };
    };
    // Stand-ins are kept for members only (made by a join or a reconnect, gone with a leave or
    // the connection): another command of a connection that has none gets a passing one.
    let proxy = match cmd.op {
        Op::Disconnected => match link.proxies.remove(&key) {
            Some((_, p)) => p.client,
            None => return,
        },
        Op::Join { .. } | Op::Reconnect => {
            let player: Arc<str> = cmd.player_id.as_str().into();
            link.proxy(key.clone(), player, || server.next_id())
        }
        _ => match link.proxies.get(&key) {
            Some(p) if !p.client.is_closing() => p.client.clone(),
            _ => link.make_proxy(key.1.clone(), key.2, server.next_id()),
        },
    };
    let leaving = matches!(cmd.op, Op::Leave).then(|| key.clone());
    let who = Who {
        player_id: cmd.player_id.into(),
        name: cmd.name.into(),
        client: proxy.clone(),
        ip: cmd.ip,
    };
    let mut re = cmd.op.re().cloned();
    let room_cmd = match cmd.op {
        Op::Join { as_, re } => {
            let (reply, rx) = oneshot::channel::<Result<crate::room::Joined, ProtoError>>();
            reply_later(link, from, req, async move {
                Reply::Joined(match rx.await {
                    Ok(r) => r.map_err(Into::into),
                    Err(_) => Err(gone().into()),
                })
            });
            RoomCmd::Join {
                who,
                as_,
                re,
                reply,
            }
        }
        Op::Leave => {
            let (reply, rx) = oneshot::channel::<Result<(), ProtoError>>();
            reply_later(link, from, req, async move {
                Reply::Left(match rx.await {
                    Ok(r) => r.map_err(Into::into),
                    Err(_) => Err(gone().into()),
                })
            });
            RoomCmd::Leave { who, reply }
        }
        Op::Reconnect => {
            let (reply, rx) = oneshot::channel();
            reply_later(link, from, req, async move {
                Reply::Reconnected(rx.await.unwrap_or(false))
            });
            RoomCmd::Reconnect { who, reply }
        }
        Op::Disconnected => {
            let player_id = who.player_id;
            let conn_id = proxy.conn_id;
            re = None;
            RoomCmd::Disconnected { player_id, conn_id }
        }
        Op::Move { x, y, re } => RoomCmd::Move { who, x, y, re },
        Op::Resign { re } => RoomCmd::Resign { who, re },
        Op::Sync { since_seq, re } => RoomCmd::Sync { who, since_seq, re },
        Op::Say { text, re } => RoomCmd::Say { who, text, re },
        Op::Offer { kind, re } => RoomCmd::Offer { who, kind, re },
        Op::Seek { .. } | Op::CancelSeek { .. } | Op::AcceptSeek { .. } | Op::ForgetSeeks => return,
        Op::Respond { kind, accept, re } => RoomCmd::Respond {
            who,
            kind,
            accept,
            re,
        },
    };
    let sent = deliver(link, &entry.handle, room_cmd);
    if let Some(key) = leaving {
        link.proxies.remove(&key);
    }
    // A room that closed meanwhile dropped the reply (answered as gone above); a command
    // without one hears the error on its connection.
    if let (Err(e), false) = (sent, req != 0) {
        proxy.send(encode_error(&e, re.as_ref()));
    }
}

/// A seek command from a connection of another node, for this node's pairing (it pairs the
/// cluster's seekers: docs/scaling.md, "Quick pairing"). The stand-in is the connection's for
/// the pairing (room ""); `paired`, `seeking` and errors go back through it.
fn pairing(server: &Arc<Server>, link: &Arc<Link>, key: ProxyKey, cmd: Cmd) {
    let player: Arc<str> = cmd.player_id.as_str().into();
    if matches!(cmd.op, Op::ForgetSeeks) {
        if let Some((_, p)) = link.proxies.remove(&key) {
            server.pairing.forget(p.client.conn_id);
        }
        return;
    }
    let proxy = link.proxy(key, player.clone(), || server.next_id());
    let who = Who {
        player_id: player,
        name: cmd.name.into(),
        client: proxy.clone(),
        ip: cmd.ip,
    };
    let result = match cmd.op {
        Op::Seek { req, re } => server
            .pairing
            .request(who, req, re.as_ref())
            .map_err(|e| (e, re)),
        Op::AcceptSeek { seek_id, re } => server
            .pairing
            .accept(who, &seek_id, re.as_ref())
            .map_err(|e| (e, re)),
        Op::CancelSeek { re } => {
            server.pairing.cancel(&who.player_id);
            proxy.send(encode(&ServerMsg::SeekCancelled {}, re.as_ref()));
            Ok(())
        }
        _ => Ok(()),
    };
    if let Err((e, re)) = result {
        proxy.send(encode_error(&e, re.as_ref()));
    }
}

/// Commands a busy room's lane holds at most; beyond, they are refused (`room_unavailable`).
const LANE: usize = 1024;

/// Hands `cmd` to room `handle` of this node without waiting: into its queue, or, when that is
/// full (the room is busy, say waiting for a slow commit), into a lane of its own behind it,
/// which a task drains in order. The inbox serves every room of this node, so it never waits
/// for one; and once a room has a lane, its commands all go through it, so none overtakes
/// another.
fn deliver(link: &Arc<Link>, handle: &RoomHandle, cmd: RoomCmd) -> Result<(), ProtoError> {
    use mpsc::error::TrySendError;
    // The map's read lock is held while a command goes into a lane: a lane is removed under
    // the write lock, once empty, so nothing is left behind in one.
    let refused = if let Some(lane) = link.lanes.get(&handle.id) {
        match lane.try_send(cmd) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Full(cmd)) => {
                (super::unavailable("is too busy for this command"), cmd)
            }
            Err(TrySendError::Closed(cmd)) => (gone(), cmd),
        }
    } else {
        let Some(queue) = handle.local_queue() else {
            return Err(gone());
        };
        match queue.try_send(cmd) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Closed(cmd)) => (gone(), cmd),
            Err(TrySendError::Full(cmd)) => {
                let (tx, rx) = mpsc::channel(LANE);
                let _ = tx.try_send(cmd);
                link.lanes.insert(handle.id.clone(), tx);
                tokio::spawn(drain(link.clone(), handle.clone(), rx));
                return Ok(());
            }
        }
    };
    // A join or leave hears why through its reply (which would otherwise say "closed").
    let (e, cmd) = refused;
    match cmd {
        RoomCmd::Join { reply, .. } => drop(reply.send(Err(e.clone()))),
        RoomCmd::Leave { reply, .. } => drop(reply.send(Err(e.clone()))),
        _ => {}
    }
    Err(e)
}

/// Feeds a busy room its lane's commands in order, waiting for room in its queue; ends (and
/// the lane goes) once the lane is empty, or the room has closed.
async fn drain(link: Arc<Link>, handle: RoomHandle, mut lane: mpsc::Receiver<RoomCmd>) {
    use mpsc::error::TryRecvError;
    loop {
        match lane.try_recv() {
            Ok(cmd) => {
                if handle.send(cmd).await.is_err() {
                    link.lanes.remove(&handle.id);
                    return;
                }
            }
            // The map no longer holds this lane's sender: nothing more can come.
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {
                if link
                    .lanes
                    .remove_if(&handle.id, |_, _| lane.is_empty())
                    .is_some()
                {
                    return;
                }
                // A command came in meanwhile: take it next.
                tokio::task::yield_now().await;
            }
        }
    }
}

fn gone() -> ProtoError {
    ProtoError::new(ErrorCode::NoSuchRoom, "the room has closed")
}

/// Publishes `reply`'s answer to request `req` of node `from` once it is ready.
fn reply_later(
    link: &Arc<Link>,
    from: &str,
    req: u64,
    reply: impl std::future::Future<Output = Reply> + Send + 'static,
) {
    let (link, inbox) = (link.clone(), link.names.inbox(from));
    tokio::spawn(async move {
        let body = serde_json::to_vec(&reply.await).unwrap_or_default();
        link.publish(inbox, wire::frame(format_args!("R {req}"), &body));
    });
}

/// A proxy's key: the room, the node and its connection.
pub(super) type ProxyKey = (Arc<str>, Arc<str>, u64);

/// A stand-in and whose connection it is.
#[derive(Clone)]
pub struct Proxied {
    /// The stand-in.
    pub client: ClientHandle,
    /// Its player.
    pub player_id: Arc<str>,
}

impl Link {
    /// The stand-in here for connection `conn` of `node` in room `room`, of `player` (made on
    /// its first command there).
    pub(crate) fn proxy(
        &self,
        key: ProxyKey,
        player_id: Arc<str>,
        next_id: impl Fn() -> u64,
    ) -> ClientHandle {
        let mut entry = self.proxies.entry(key.clone()).or_insert_with(|| Proxied {
            client: self.make_proxy(key.1.clone(), key.2, next_id()),
            player_id: player_id.clone(),
        });
        // A stand-in closed (too slow) is done: the connection's next command gets a new one.
        if entry.client.is_closing() {
            *entry = Proxied {
                client: self.make_proxy(key.1, key.2, next_id()),
                player_id,
            };
        }
        entry.client.clone()
    }
}
