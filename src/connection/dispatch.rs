//! What a connection does with each message once it is admitted: `hello` (sessions), then the
//! lobby's messages here and the room's forwarded to the room.

use std::sync::Arc;

use serde_json::Value;

use super::Conn;
use crate::client::{CLOSE_ROOM_MOVED, CLOSE_TAKEN_OVER};
use crate::cluster::ownership::{locate, relocate, Unreachable};
use crate::cluster::wire::Op;
use crate::lobby::Session;
use crate::pairing::SeekRequest;
use crate::protocol::{encode, ClientMsg, ErrorCode, ProtoError, ServerMsg, PROTOCOL_VERSION};
use crate::room::{RoomCmd, RoomHandle, SeatKind, Who};

impl Conn {
    pub(super) fn who(&self, session: &Session) -> Who {
        Who {
            player_id: session.player_id.clone(),
            name: session.name(),
            client: self.client.clone(),
            ip: self.ip,
        }
    }

    /// A room by id: this node's, or in a cluster one another node runs (or, when its node
    /// died, one this node takes over).
    pub(super) async fn room(&self, room_id: &str) -> Result<RoomHandle, ProtoError> {
        locate(&self.server, room_id, false)
            .await?
            .ok_or_else(|| ProtoError::new(ErrorCode::NoSuchRoom, format!("no room {room_id:?}")))
    }

    /// Sends `cmd` to a room: one this connection is in through its own handle, any other
    /// through the lobby (the room answers a non-member's move with an error).
    pub(super) async fn send_to_room(&self, room_id: &str, cmd: RoomCmd) -> Result<(), ProtoError> {
        match self.rooms.get(room_id) {
            Some(handle) => handle.send(cmd).await,
            None => self.room(room_id).await?.send(cmd).await,
        }
    }

    pub(super) async fn dispatch(
        &mut self,
        msg: ClientMsg,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let (session, msg) = match (&self.session, msg) {
            (None, ClientMsg::Hello { name, token }) => return self.hello(name, token, re).await,
            (None, _) => return Err(ProtoError::new(ErrorCode::NotHello, "send hello first")),
            (Some(s), msg) => (s.clone(), msg),
        };
        let reply = |m: ServerMsg| {
            self.client.send(encode(&m, re));
        };
        match msg {
            ClientMsg::Hello { .. } => {
                return Err(ProtoError::new(
                    ErrorCode::AlreadyHello,
                    "hello was already received",
                ))
            }
            ClientMsg::Ping {} => reply(ServerMsg::Pong {}),
            ClientMsg::ListRooms { limit, after } => {
                // Paged so that one request queues at most a page (`send_queue_bytes` bounds
                // what piles up; this bounds what one reply adds).
                let page = self.server.config.limits.room_list_page;
                let limit = limit.unwrap_or(page).clamp(1, page);
                let (rooms, next) = self.server.lobby.summaries_page(after.as_deref(), limit);
                reply(ServerMsg::RoomList { rooms, next })
            }
            ClientMsg::WatchLobby {} => {
                // Watch first: a change between the list and the registration is then sent
                // again rather than missed. The first page only: the client asks for the rest
                // with `list_rooms` and `after`, applying updates and pages in arrival order.
                self.server.lobby.watch(self.client.clone());
                let page = self.server.config.limits.room_list_page;
                let (rooms, next) = self.server.lobby.summaries_page(None, page);
                reply(ServerMsg::RoomList { rooms, next });
                if !self.server.pairing.is_empty() {
                    let seeks = self.server.pairing.list();
                    self.client.send(encode(&ServerMsg::Seeks { seeks }, None));
                } else if let Some(seeks) = self.server.lobby.cluster().and_then(|l| l.seeks()) {
                    // The pairing node's open seeks, as it last told them.
                    self.client.send(seeks);
                }
            }
            ClientMsg::UnwatchLobby {} => {
                self.server.lobby.unwatch(self.client.conn_id);
                reply(ServerMsg::LobbyUnwatched {})
            }
            ClientMsg::CreateRoom {
                game,
                width,
                height,
                rule,
                x,
                o,
                time_control,
                casual,
            } => {
                let mut params = self.server.lobby.check_params(
                    &game,
                    width,
                    height,
                    rule.as_deref(),
                    &x,
                    &o,
                    time_control.as_ref(),
                )?;
                params.casual = casual;
                if params.seats.iter().any(|k| matches!(k, SeatKind::Me)) {
                    // Written before the room exists: a bot may move first, and the creator's
                    // row must be durable no later than that move (the store keeps order).
                    self.server.lobby.seated(&session);
                }
                let elsewhere =
                    crate::cluster::ownership::claims_elsewhere(&self.server, &session.player_id)
                        .await;
                let (handle, seat) = self
                    .server
                    .lobby
                    .open_room_counting(self.who(&session), params, re.cloned(), elsewhere)
                    .await?;
                if seat.is_some() {
                    session.add_seat(handle.id.clone());
                }
                self.rooms.insert(handle.id.clone(), handle);
            }
            ClientMsg::JoinRoom { room_id, as_ } => {
                let handle = self.room(&room_id).await?;
                let seat = handle.join(self.who(&session), as_, re.cloned()).await?;
                if seat.is_some() {
                    self.server.lobby.seated(&session);
                    session.add_seat(handle.id.clone());
                }
                self.rooms.insert(handle.id.clone(), handle);
            }
            ClientMsg::LeaveRoom { room_id } => {
                let handle = match self.rooms.get(room_id.as_str()) {
                    Some(h) => h.clone(),
                    None => self.room(&room_id).await?,
                };
                handle.leave(self.who(&session)).await?;
                self.rooms.remove(&*room_id);
                session.remove_seat(&room_id);
                reply(ServerMsg::Left { room_id });
            }
            ClientMsg::Move { room_id, x, y } => {
                let who = self.who(&session);
                let re = re.cloned();
                self.send_to_room(&room_id, RoomCmd::Move { who, x, y, re })
                    .await?;
            }
            ClientMsg::Resign { room_id } => {
                let who = self.who(&session);
                let re = re.cloned();
                self.send_to_room(&room_id, RoomCmd::Resign { who, re })
                    .await?;
            }
            ClientMsg::Sync { room_id, since_seq } => {
                let who = self.who(&session);
                let re = re.cloned();
                self.send_to_room(&room_id, RoomCmd::Sync { who, since_seq, re })
                    .await?;
            }
            ClientMsg::Seek {
                game,
                width,
                height,
                rule,
                casual,
                bot,
                bot_after_ms,
                time_control,
            } => {
                let req = SeekRequest {
                    game,
                    width,
                    height,
                    rule,
                    casual,
                    bot,
                    bot_after_ms,
                    time_control,
                };
                let who = self.who(&session);
                // In a cluster one node pairs everyone (docs/scaling.md, "Quick pairing").
                match self.server.lobby.cluster() {
                    Some(link) if !link.pairs_here()? => {
                        link.forward_pairing(
                            &who,
                            Op::Seek {
                                req,
                                re: re.cloned(),
                            },
                        )?;
                    }
                    _ => self.server.pairing.request(who, req, re)?,
                }
            }
            ClientMsg::CancelSeek {} => match self.server.lobby.cluster() {
                // The pairing node answers, after any `paired` it sent first.
                Some(link) if !link.pairs_here()? => {
                    let op = Op::CancelSeek { re: re.cloned() };
                    link.forward_pairing(&self.who(&session), op)?;
                }
                _ => {
                    self.server.pairing.cancel(&session.player_id);
                    reply(ServerMsg::SeekCancelled {});
                }
            },
            ClientMsg::AcceptSeek { seek_id } => {
                let who = self.who(&session);
                match self.server.lobby.cluster() {
                    Some(link) if !link.pairs_here()? => {
                        let op = Op::AcceptSeek {
                            seek_id,
                            re: re.cloned(),
                        };
                        link.forward_pairing(&who, op)?;
                    }
                    _ => self.server.pairing.accept(who, &seek_id, re)?,
                }
            }
            ClientMsg::Offer { room_id, kind } => {
                let who = self.who(&session);
                let re = re.cloned();
                self.send_to_room(&room_id, RoomCmd::Offer { who, kind, re })
                    .await?;
            }
            ClientMsg::Respond {
                room_id,
                kind,
                accept,
            } => {
                let who = self.who(&session);
                let re = re.cloned();
                let cmd = RoomCmd::Respond {
                    who,
                    kind,
                    accept,
                    re,
                };
                self.send_to_room(&room_id, cmd).await?;
            }
            ClientMsg::Register { username, password } => {
                return self.register(&session, username, password, re).await
            }
            ClientMsg::Login { username, password } => {
                return self.login(&session, username, password, re).await
            }
            ClientMsg::LogoutEverywhere {} => return self.logout_everywhere(&session, re).await,
            ClientMsg::ChangePassword { old, new } => {
                return self.change_password(&session, old, new, re).await
            }
            ClientMsg::Chat { room_id, text } => {
                let text = crate::names::chat_line(&text, self.server.config.chat.max_chars)?;
                // Only a line the room may take costs from the bucket.
                if !self.rooms.contains_key(room_id.as_str()) {
                    self.room(&room_id).await?;
                    return Err(ProtoError::new(
                        ErrorCode::NotInRoom,
                        "join the room to chat in it",
                    ));
                }
                if !self.chat_bucket.take() {
                    return Err(ProtoError::new(
                        ErrorCode::ChatTooFast,
                        "too many chat lines; wait a little",
                    ));
                }
                let who = self.who(&session);
                let re = re.cloned();
                self.send_to_room(&room_id, RoomCmd::Say { who, text, re })
                    .await?;
            }
        }
        Ok(())
    }

    /// A token neither the lobby nor the accounts hold may be bound to an account by another
    /// node sharing the database since this one started: asks the store, and adopts what it
    /// finds, so the `hello` resumes the account here too.
    async fn adopt_account_token(&self, token: &str) {
        if self.server.lobby.session(token).is_some() {
            return;
        }
        let hash = crate::store::hash_token(token);
        if self.server.accounts.of_token(&hash).is_some() {
            return;
        }
        self.server.accounts.adopt_token(&hash).await;
    }

    /// In a cluster, the store is where every node notes the seats a session takes: a token
    /// this node does not hold may be a session another node issued (in the database once it
    /// took a seat), adopted here with the seats the store says it holds; one this node holds
    /// gets the seats other nodes gave it since (a session this node loaded at its start, or met
    /// before, knows only the seats it saw), so the `hello` resumes all of them here.
    async fn adopt_session(&self, token: &str) {
        if self.server.lobby.cluster().is_none() {
            return;
        }
        let store = self.server.store.clone();
        let hash = crate::store::hash_token(token);
        let lobby = &self.server.lobby;
        match tokio::task::spawn_blocking(move || store.session_of_token(&hash)).await {
            Ok(Ok(Some((s, rooms)))) => match lobby.session(token) {
                Some(held) => rooms.into_iter().for_each(|r| held.add_seat(r.into())),
                None => {
                    let seats = rooms.into_iter().map(Arc::from).collect();
                    lobby.restore_session(s.token_hash, s.player_id.into(), s.name.into(), seats);
                }
            },
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("store: looking up a session failed: {e}"),
            Err(e) => tracing::warn!("store: looking up a session failed: {e}"),
        }
    }

    pub(super) async fn hello(
        &mut self,
        name: Option<String>,
        token: Option<String>,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let name = match name {
            Some(raw) => crate::names::clean(&raw, self.server.config.limits.max_name_chars)?,
            None => None,
        };
        let lobby = &self.server.lobby;
        if let Some(t) = token.as_deref() {
            self.adopt_account_token(t).await;
            self.adopt_session(t).await;
        }
        // A token the lobby no longer holds (a restart, the janitor) but that is bound to an
        // account resumes the account, in a session without seats.
        let found = token.as_deref().and_then(|t| {
            let s = lobby.session(t).or_else(|| {
                let hash = crate::store::hash_token(t);
                let account = self.server.accounts.of_token(&hash)?;
                Some(lobby.restore_session(
                    hash,
                    account.player_id.clone(),
                    account.username.clone(),
                    Default::default(),
                ))
            })?;
            Some((s, t.to_string()))
        });
        let (session, token, resumed) = match found {
            Some((s, t)) => {
                // An account's name is its username.
                let account = self.server.accounts.of_player(&s.player_id).is_some();
                if let Some(n) = name.filter(|n| !account && **n != *s.name()) {
                    s.set_name(n.into());
                    lobby.renamed(&s);
                }
                (s, t, true)
            }
            // Memory only until it takes a seat (`Lobby::seated`): a hello that never sits
            // leaves no row.
            None => {
                let n = name.unwrap_or_else(|| {
                    format!("guest-{}", &uuid::Uuid::new_v4().simple().to_string()[..4])
                });
                let (s, t) = lobby.new_session(n.into());
                (s, t, false)
            }
        };
        if let Some(old) = session.attach(self.client.clone()) {
            if old.conn_id != self.client.conn_id {
                old.close(CLOSE_TAKEN_OVER, "session resumed on another connection");
            }
        }
        // In a cluster, its connection on another node (if any) closes with 4000 too.
        if let (true, Some(link)) = (resumed, lobby.cluster()) {
            link.announce('T', &session.token_hash);
        }
        self.session = Some(session.clone());
        self.client.send(encode(
            &ServerMsg::Welcome {
                player_id: session.player_id.to_string(),
                name: session.name().to_string(),
                token,
                protocol: PROTOCOL_VERSION,
                resumed,
                bots: self.server.bots.infos(),
                account: self
                    .server
                    .accounts
                    .of_player(&session.player_id)
                    .map(|a| a.username.to_string()),
            },
            re,
        ));
        if resumed {
            let mut unreachable = false;
            for room_id in session.seats() {
                let back = match locate(&self.server, &room_id, true).await {
                    Ok(Some(handle)) if handle.reconnect(self.who(&session)).await => {
                        Ok(Some(handle))
                    }
                    // Its node did not give the seat back: it may have just died (the room then
                    // runs elsewhere once its lease is gone, or here), or be restoring the room.
                    Ok(Some(handle)) if !handle.is_local() => {
                        let who = self.who(&session);
                        relocate(&self.server, &room_id, &who).await
                    }
                    Ok(_) => Ok(None),
                    Err(e) => Err(e),
                };
                match back {
                    Ok(Some(handle)) => {
                        self.rooms.insert(room_id, handle);
                    }
                    Ok(None) => session.remove_seat(&room_id),
                    // Redis or the store did not answer: the seat stays, for the next try.
                    Err(Unreachable) => unreachable = true,
                }
            }
            if unreachable {
                // The client reconnects, and its resume looks again (docs/protocol.md, 1012).
                self.client
                    .close(CLOSE_ROOM_MOVED, "a room cannot be reached now; reconnect");
            }
        }
        Ok(())
    }
}
