//! The account messages of a connection (`register`, `login`, `logout_everywhere`,
//! `change_password`): the connection's side of [`crate::accounts`].

use std::sync::Arc;

use serde_json::Value;

use super::Conn;
use crate::accounts::Account;
use crate::client::{CLOSE_LOGGED_OUT, CLOSE_TAKEN_OVER};
use crate::lobby::Session;
use crate::protocol::{encode, ErrorCode, ProtoError, Secret, ServerMsg};

impl Conn {
    /// The account the session is logged in to (`not_logged_in` for a guest).
    fn logged_in(&self, session: &Session) -> Result<Arc<Account>, ProtoError> {
        self.server
            .accounts
            .of_player(&session.player_id)
            .ok_or_else(|| ProtoError::new(ErrorCode::NotLoggedIn, "log in first"))
    }

    /// `register`: the session's player id (and its games) become the account's; the session
    /// keeps its token, now bound to the account.
    pub(super) async fn register(
        &mut self,
        session: &Session,
        username: String,
        password: Secret,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let username = crate::names::clean(&username, self.server.config.limits.max_name_chars)?
            .ok_or_else(|| ProtoError::new(ErrorCode::BadName, "a username cannot be empty"))?;
        let account = self
            .server
            .accounts
            .register(
                &session.player_id,
                &session.token_hash,
                username,
                password.0,
            )
            .await?;
        session.set_name(account.username.clone());
        self.server.lobby.renamed(session);
        self.client.send(encode(
            &ServerMsg::LoggedIn {
                player_id: account.player_id.to_string(),
                name: account.username.to_string(),
                token: None,
            },
            re,
        ));
        Ok(())
    }

    /// `login`: a new session of the account, with a new token, replaces the connection's.
    pub(super) async fn login(
        &mut self,
        session: &Session,
        username: String,
        password: Secret,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        if !self.rooms.is_empty() {
            return Err(ProtoError::new(
                ErrorCode::InRoom,
                "leave your rooms before logging in",
            ));
        }
        let account = self
            .server
            .accounts
            .login(self.ip, &username, password.0)
            .await?;
        let lobby = &self.server.lobby;
        let (new, token) =
            lobby.new_session_for(account.player_id.clone(), account.username.clone());
        self.server
            .accounts
            .new_token(&account, &new.token_hash)
            .await?;
        self.server.pairing.cancel(&session.player_id);
        session.detach(self.client.conn_id);
        if let Some(old) = new.attach(self.client.clone()) {
            if old.conn_id != self.client.conn_id {
                old.close(CLOSE_TAKEN_OVER, "session resumed on another connection");
            }
        }
        self.session = Some(new);
        self.client.send(encode(
            &ServerMsg::LoggedIn {
                player_id: account.player_id.to_string(),
                name: account.username.to_string(),
                token: Some(token),
            },
            re,
        ));
        Ok(())
    }

    /// `logout_everywhere`: every token of the account stops working and every connection of
    /// it closes (4001), this one after its `logged_out`.
    pub(super) async fn logout_everywhere(
        &mut self,
        session: &Session,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let account = self.logged_in(session)?;
        self.server.accounts.logout_everywhere(&account).await?;
        self.client.send(encode(&ServerMsg::LoggedOut {}, re));
        crate::cluster::node::logged_out(&self.server, &account.player_id);
        if let Some(link) = self.server.lobby.cluster() {
            link.announce('L', &account.player_id);
        }
        self.client.close(CLOSE_LOGGED_OUT, "logged out everywhere");
        Ok(())
    }

    /// `change_password`: after the old one (rate limited like a login).
    pub(super) async fn change_password(
        &mut self,
        session: &Session,
        old: Secret,
        new: Secret,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let account = self.logged_in(session)?;
        self.server
            .accounts
            .change_password(self.ip, &account, old.0, new.0)
            .await?;
        self.client.send(encode(&ServerMsg::PasswordChanged {}, re));
        Ok(())
    }
}
