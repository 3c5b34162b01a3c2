//! The PostgreSQL store with real server processes on a real PostgreSQL (the one
//! `scripts/services` starts; each test creates a database of its own): a game survives a
//! `kill -9` of the server with no acknowledged move lost, and two servers running on one
//! database at once share accounts (a token one issues resumes on the other): the first
//! property of a cluster (docs/scaling.md).
//!
//! Without `CARO_TEST_POSTGRES_URL` these tests say they are skipped and pass, unless
//! `CARO_REQUIRE_SERVICES=1` (scripts/test, CI): then they fail.

mod common;

use std::net::SocketAddr;
use std::process::Child;

use caro_arena::store::postgres::testing::fresh_database;
use common::scripted::*;
use common::*;
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

/// The real binary on the PostgreSQL database `url`; returns it and its address.
fn spawn_node(dir: &std::path::Path, url: &str) -> (Child, SocketAddr) {
    spawn_binary(
        dir,
        &format!(
            "[server]\nlog = \"warn\"\n[rooms]\ngrace_ms = 30000\n[search]\nmin_move_ms = 0\n\
             [store]\nurl = {url:?}\n"
        ),
    )
}

async fn hello(addr: SocketAddr, msg: Value) -> (Client, Value) {
    let mut c = connect(addr).await;
    c.send(msg).await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    (c, w)
}

fn kill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL on unix
    child.wait().unwrap();
}

#[tokio::test]
async fn kill_9_on_postgres_loses_no_acknowledged_move_and_tokens_resume() {
    let Some(url) = fresh_database("kill_9_on_postgres") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (child, addr) = spawn_node(dir.path(), &url);
    let (mut alice, mut bob, room, wa, wb) = seated(addr).await;
    play_moves(&mut alice, &mut bob, &room, 0..6).await;
    // SIGKILL right after the last acknowledgement.
    kill(child);
    drop((alice, bob));

    let (child, addr) = spawn_node(dir.path(), &url);
    let mut resumed = Vec::new();
    for w in [&wa, &wb] {
        let (c, back, joined) = resume(addr, &token(w)).await;
        assert_eq!(back["player_id"], w["player_id"], "{back}");
        assert_eq!(joined["room"]["moves"], moves_json(6), "{joined}");
        assert_eq!(joined["room"]["seq"], 6);
        resumed.push(c);
    }
    let (mut bob, mut alice) = (resumed.pop().unwrap(), resumed.pop().unwrap());
    alice.recv_skip(&[]).await; // room_update: bob is back
    finish(&mut alice, &mut bob, &room, 6).await;
    let (status, body) = http_get(addr, &format!("/api/games/{room}")).await;
    assert!(status.contains("200"), "{status}");
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(game["moves"].as_array().unwrap().len(), 9, "{game}");
    assert_eq!(
        (&game["result"], &game["reason"]),
        (&json!("x"), &json!("line"))
    );
    let (_, body) = http_get(addr, "/api/games?limit=5").await;
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["games"][0]["id"], json!(room), "{list}");
    kill(child);
}

/// Registers `username` from a new guest on `addr`: its token and player id.
async fn register(addr: SocketAddr, username: &str) -> (String, String) {
    let (mut c, w) = hello(addr, json!({"type": "hello", "name": "guest"})).await;
    let player_id = w["player_id"].as_str().unwrap().to_string();
    c.ask(
        json!({"type": "register", "id": 1, "username": username, "password": PASSWORD}),
        json!({"type": "logged_in", "re": 1, "player_id": player_id, "name": username}),
    )
    .await;
    (w["token"].as_str().unwrap().to_string(), player_id)
}

#[tokio::test]
async fn two_nodes_on_one_database_accept_each_others_account_tokens() {
    let Some(url) = fresh_database("two_nodes_on_one_database") else {
        return;
    };
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Both start at once: the migration runs once, under its lock.
    let (node_a, a) = spawn_node(a_dir.path(), &url);
    let (node_b, b) = spawn_node(b_dir.path(), &url);
    // Registered on each node after both started: the other has never seen the token.
    for (issuer, other, username) in [(a, b, "Ann"), (b, a, "Ben")] {
        let (token, player_id) = register(issuer, username).await;
        let (_c, w) = hello(other, json!({"type": "hello", "token": token})).await;
        assert_eq!(
            (&w["resumed"], &w["player_id"], &w["name"], &w["account"]),
            (
                &json!(true),
                &json!(player_id),
                &json!(username),
                &json!(username)
            ),
            "{w}"
        );
    }
    // A token nobody issued is still a new guest.
    let (_c, w) = hello(b, json!({"type": "hello", "token": "not-a-token"})).await;
    assert_eq!(w["resumed"], false, "{w}");
    kill(node_a);
    kill(node_b);
}
