//! Accounts over real sockets (issue 18): register, log in from another connection, the same
//! answer to a wrong user and a wrong password, the login rate limits, a session restored after
//! a restart on a real SQLite file, logging out everywhere, changing the password, a guest's
//! games kept by registering, and no password in the database file.

mod common;

use std::sync::Arc;

use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::Store;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

const PASSWORD: &str = "correct horse battery";

/// The next text frame, as sent (for byte comparisons).
async fn recv_text(c: &mut Client) -> String {
    loop {
        let m = tokio::time::timeout(WAIT, c.ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("no error");
        if let Message::Text(t) = m {
            return t.as_str().to_string();
        }
    }
}

/// A guest that registers `username`; returns the client, its token and its player id.
async fn registered(server: &TestServer, username: &str) -> (Client, String, String) {
    let (mut c, w) = server.hello("guest").await;
    assert_eq!(
        w.get("account"),
        None,
        "a guest's welcome has no account: {w}"
    );
    let player_id = w["player_id"].as_str().unwrap().to_string();
    c.ask(
        json!({"type": "register", "id": 1, "username": username, "password": PASSWORD}),
        json!({"type": "logged_in", "re": 1, "player_id": player_id, "name": username}),
    )
    .await;
    (c, w["token"].as_str().unwrap().to_string(), player_id)
}

/// A new connection that logs in: the client, the `logged_in`.
async fn logged_in(server: &TestServer, username: &str, password: &str) -> (Client, Value) {
    let (mut c, _) = server.hello("someone").await;
    c.send(json!({"type": "login", "id": 2, "username": username, "password": password}))
        .await;
    let v = c.recv().await;
    (c, v)
}

async fn resumed(server: &TestServer, token: &str) -> Value {
    let mut c = server.connect().await;
    c.send(json!({"type": "hello", "token": token})).await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    w
}

#[tokio::test]
async fn register_then_log_in_from_another_connection_as_the_same_player() {
    let server = start(config()).await;
    let (_a, token, player_id) = registered(&server, "Alice").await;
    // Case-insensitive, with a new token that resumes the account.
    let (_b, v) = logged_in(&server, "aLICE", PASSWORD).await;
    let new_token = v["token"].as_str().unwrap().to_string();
    assert_ne!(new_token, token);
    assert_eq!(
        v,
        json!({"type": "logged_in", "re": 2, "player_id": player_id, "name": "Alice",
               "token": new_token})
    );
    let w = resumed(&server, &new_token).await;
    assert_eq!(
        (&w["player_id"], &w["name"], &w["resumed"], &w["account"]),
        (
            &json!(player_id),
            &json!("Alice"),
            &json!(true),
            &json!("Alice")
        )
    );
    // The registering session's own token is the account's too.
    let w = resumed(&server, &token).await;
    assert_eq!(w["player_id"], json!(player_id));
    server.stop().await;
}

#[tokio::test]
async fn usernames_are_unique_case_insensitively_and_passwords_bounded() {
    let server = start(config()).await;
    let (mut a, _, _) = registered(&server, "Bob").await;
    let (mut c, _) = server.hello("x").await;
    c.ask(
        json!({"type": "register", "id": 3, "username": "BOB", "password": PASSWORD}),
        json!({"type": "error", "re": 3, "code": "username_taken",
               "message": "that username is taken"}),
    )
    .await;
    c.ask(
        json!({"type": "register", "id": 4, "username": "carol", "password": "short"}),
        json!({"type": "error", "re": 4, "code": "bad_password",
               "message": "a password has 8 to 128 characters"}),
    )
    .await;
    a.ask(
        json!({"type": "register", "id": 5, "username": "bob2", "password": PASSWORD}),
        json!({"type": "error", "re": 5, "code": "already_registered",
               "message": "this session is already an account"}),
    )
    .await;
    // Guests have no account to log out of.
    c.ask(
        json!({"type": "logout_everywhere", "id": 6}),
        json!({"type": "error", "re": 6, "code": "not_logged_in", "message": "log in first"}),
    )
    .await;
    server.stop().await;
}

/// A wrong password and an unknown username must not tell an attacker which usernames exist.
#[tokio::test]
async fn a_wrong_password_and_an_unknown_user_get_byte_identical_errors() {
    let server = start(config()).await;
    let _a = registered(&server, "dave").await;
    let (mut c, _) = server.hello("x").await;
    let mut answers = Vec::new();
    for user in ["dave", "nobody-here"] {
        c.send(json!({"type": "login", "id": 7, "username": user, "password": "wrong password"}))
            .await;
        answers.push(recv_text(&mut c).await);
    }
    assert_eq!(answers[0], answers[1]);
    let v: Value = serde_json::from_str(&answers[0]).unwrap();
    assert_eq!(
        v,
        json!({"type": "error", "re": 7, "code": "bad_login",
               "message": "wrong username or password"})
    );
    server.stop().await;
}

#[tokio::test]
async fn logins_are_rate_limited_per_account_even_with_the_right_password() {
    let server = start(config_with("", "logins_per_account_per_minute = 3", "", "")).await;
    let _a = registered(&server, "erin").await;
    let (mut c, _) = server.hello("x").await;
    for _ in 0..3 {
        c.send(json!({"type": "login", "username": "erin", "password": "not it at all"}))
            .await;
        assert_eq!(c.recv().await["code"], "bad_login");
    }
    // Another address would be refused too: the limit is the account's. The right password
    // does not get through either.
    c.ask(
        json!({"type": "login", "id": 8, "username": "ERIN", "password": PASSWORD}),
        json!({"type": "error", "re": 8, "code": "too_many_logins",
               "message": "too many login attempts; wait a minute"}),
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn logins_are_rate_limited_per_address() {
    let server = start(config_with("", "logins_per_ip_per_minute = 2", "", "")).await;
    let (mut c, _) = server.hello("x").await;
    for user in ["u1", "u2"] {
        c.send(json!({"type": "login", "username": user, "password": "whatever it is"}))
            .await;
        assert_eq!(c.recv().await["code"], "bad_login");
    }
    // A third username, from a new connection of the same address.
    let (mut d, _) = server.hello("y").await;
    d.send(json!({"type": "login", "username": "u3", "password": "whatever it is"}))
        .await;
    assert_eq!(d.recv().await["code"], "too_many_logins");
    server.stop().await;
}

#[tokio::test]
async fn change_password_needs_the_old_one_and_then_only_the_new_one_works() {
    let server = start(config()).await;
    let (mut a, _, _) = registered(&server, "frank").await;
    a.ask(
        json!({"type": "change_password", "id": 9, "old": "not the password", "new": "a new password"}),
        json!({"type": "error", "re": 9, "code": "bad_login",
               "message": "wrong username or password"}),
    )
    .await;
    a.ask(
        json!({"type": "change_password", "id": 10, "old": PASSWORD, "new": "a new password"}),
        json!({"type": "password_changed", "re": 10}),
    )
    .await;
    let (_, v) = logged_in(&server, "frank", PASSWORD).await;
    assert_eq!(v["code"], "bad_login", "{v}");
    let (_, v) = logged_in(&server, "frank", "a new password").await;
    assert_eq!(v["type"], "logged_in", "{v}");
    server.stop().await;
}

/// Every connection of the account closes with 4001, and none of its tokens resumes it.
#[tokio::test]
async fn logout_everywhere_closes_every_connection_and_voids_every_token() {
    let server = start(config()).await;
    let (mut a, token_a, player_id) = registered(&server, "gina").await;
    let (mut b, v) = logged_in(&server, "gina", PASSWORD).await;
    let token_b = v["token"].as_str().unwrap().to_string();
    a.ask(
        json!({"type": "logout_everywhere", "id": 11}),
        json!({"type": "logged_out", "re": 11}),
    )
    .await;
    for c in [&mut a, &mut b] {
        let frame = c.closed().await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 4001);
        assert_eq!(frame.reason.as_str(), "logged out everywhere");
    }
    for token in [&token_a, &token_b] {
        let w = resumed(&server, token).await;
        assert_eq!(w["resumed"], false, "{w}");
        assert_ne!(w["player_id"], json!(player_id));
    }
    // The password still logs in.
    let (_, v) = logged_in(&server, "gina", PASSWORD).await;
    assert_eq!(v["player_id"], json!(player_id));
    server.stop().await;
}

/// A guest who registers keeps its player id, so its finished games stay listed under it.
#[tokio::test]
async fn a_guests_finished_game_stays_its_own_after_registering() {
    let server = start(config()).await;
    let (mut c, w) = server.hello("guesty").await;
    let player_id = w["player_id"].as_str().unwrap().to_string();
    let (_, room) = create(
        &mut c,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    let (mut other, _) = server.hello("other").await;
    other
        .send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(other.recv().await["type"], "room_joined");
    c.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(c.recv_skip(&["room_update"]).await["type"], "game_over");
    c.send(json!({"type": "leave_room", "room_id": room})).await;
    assert_eq!(c.recv_skip(&["room_update"]).await["type"], "left");
    c.ask(
        json!({"type": "register", "id": 12, "username": "Hana", "password": PASSWORD}),
        json!({"type": "logged_in", "re": 12, "player_id": player_id, "name": "Hana"}),
    )
    .await;
    // From another connection, logged in: the same player id, the same games.
    let (_, v) = logged_in(&server, "hana", PASSWORD).await;
    assert_eq!(v["player_id"], json!(player_id));
    let (status, body) = server.get(&format!("/api/games?player={player_id}")).await;
    assert!(status.contains("200"), "{status}");
    let games: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&Value> = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["id"])
        .collect();
    assert_eq!(ids, [&json!(room)], "{body}");
    server.stop().await;
}

/// On a real SQLite file: the account and its token survive a restart, and the file holds the
/// argon2id hash, never the password.
#[tokio::test]
async fn an_account_session_is_restored_after_a_restart_and_no_password_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (c, token, player_id) = registered(&server, "Ivan").await;
    server.stop().await;
    drop(store);
    drop(c);

    let raw = std::fs::read(&db).unwrap();
    let wal = std::fs::read(db.with_extension("db-wal")).unwrap_or_default();
    for secret in [PASSWORD, &token] {
        for bytes in [&raw, &wal] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()));
        }
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (key, phc): (String, String) = conn
        .query_row(
            "SELECT username_key, password_phc FROM accounts WHERE player_id = ?1",
            [&player_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(key, "ivan");
    assert!(phc.starts_with("$argon2id$"), "{phc}");
    drop(conn);

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let w = resumed(&server, &token).await;
    assert_eq!(
        (&w["player_id"], &w["name"], &w["resumed"]),
        (&json!(player_id), &json!("Ivan"), &json!(true))
    );
    let (_, v) = logged_in(&server, "IVAN", PASSWORD).await;
    assert_eq!(v["player_id"], json!(player_id), "{v}");
    server.stop().await;
}

/// The v7 migration adds tables only: a v6 file's unfinished game and the guest session seated
/// in it come back as before, and the file has no accounts yet.
#[test]
fn migrating_a_v6_file_keeps_its_games_and_guest_sessions() {
    use caro_arena::store::sqlite;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let conn = common::database_at_version(&db, 6);
    conn.execute_batch(
        "INSERT INTO games (id, game, width, height, created_at) VALUES ('g1', 'tictactoe', 3, 3, 1);
         INSERT INTO seats VALUES ('g1', 'x', 'human', 'p1', 'ann', NULL);
         INSERT INTO seats VALUES ('g1', 'o', 'human', 'p2', 'ben', NULL);
         INSERT INTO sessions VALUES ('h1', 'p1', 'ann', 1);",
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&db).unwrap();
    let restored = store.restore().unwrap();
    assert_eq!(restored.games.len(), 1);
    assert_eq!(restored.games[0].summary.id, "g1");
    assert_eq!(restored.sessions.len(), 1);
    assert_eq!(
        (
            restored.sessions[0].token_hash.as_str(),
            restored.sessions[0].player_id.as_str()
        ),
        ("h1", "p1")
    );
    assert_eq!(store.accounts().unwrap(), Default::default());
    drop(store);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, sqlite::schema_version());
}

/// `logout_everywhere` deletes the account's tokens from the database too: a restart does not
/// bring them back.
#[tokio::test]
async fn a_token_logged_out_everywhere_stays_dead_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (mut c, token, player_id) = registered(&server, "Kim").await;
    c.ask(
        json!({"type": "logout_everywhere", "id": 13}),
        json!({"type": "logged_out", "re": 13}),
    )
    .await;
    assert_eq!(u16::from(c.closed().await.unwrap().code), 4001);
    server.stop().await;
    drop(store);

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let w = resumed(&server, &token).await;
    assert_eq!(w["resumed"], false, "{w}");
    assert_ne!(w["player_id"], json!(player_id));
    let (_, v) = logged_in(&server, "kim", PASSWORD).await;
    assert_eq!(v["player_id"], json!(player_id), "{v}");
    server.stop().await;
}

#[tokio::test]
async fn login_is_refused_from_a_connection_in_a_room() {
    let server = start(config()).await;
    let _a = registered(&server, "Lan").await;
    let (mut c, _) = server.hello("x").await;
    create(
        &mut c,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    c.ask(
        json!({"type": "login", "id": 14, "username": "lan", "password": PASSWORD}),
        json!({"type": "error", "re": 14, "code": "in_room",
               "message": "leave your rooms before logging in"}),
    )
    .await;
    server.stop().await;
}
