//! The PostgreSQL store gives back exactly what the SQLite store gives back, for every kind of
//! event either records (times aside: each stamps its own clock), and its migrations refuse a
//! newer database. Each test runs in a fresh database of its own (`testing`).

use super::testing::fresh_database;
use super::*;
use crate::protocol::{Outcome, Reason, TimeControl};
use crate::store::sqlite::SqliteStore;
use crate::store::{AccountEvent, ForfeitRecord, GameCreated, RatingRow, RowChange};

fn created(id: &str, player: &str, casual: bool, time_control: TimeControl) -> StoreEvent {
    StoreEvent::Created(GameCreated {
        room_id: id.into(),
        game: "caro",
        width: 15,
        height: 15,
        rule: Some("freestyle"),
        seats: [
            SeatRecord::Human {
                player_id: player.into(),
                name: "Ann".into(),
            },
            SeatRecord::Bot {
                level: "beginner".into(),
            },
        ],
        time_control,
        casual,
        rated: !casual,
    })
}

fn mv(id: &str, seq: u64, cell: [u8; 2], clock: Option<[u64; 2]>) -> StoreEvent {
    let seat = if seq % 2 == 1 { Seat::X } else { Seat::O };
    StoreEvent::Move {
        room_id: id.into(),
        seq,
        seat,
        cell,
        clock,
    }
}

/// Waits for a commit (outside any runtime, as a room's task would inside one).
fn wait(commit: Commit) -> Result<(), StoreError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(commit.wait())
}

/// Records `e` in `store` and waits for its commit.
fn commit(store: &PostgresStore, e: StoreEvent) -> Result<(), StoreError> {
    wait(store.record(e))
}

/// Every kind of event, odd ones included (chat and an analysis of an unknown game, a second
/// account with a taken username, a token bound to no account), each awaited like a room
/// awaits it.
fn record_everything(store: &dyn Store) {
    let fischer = TimeControl::Fischer {
        base_ms: 60_000,
        increment_ms: 1_000,
    };
    let session = |hash: &str, player: &str, name: &str| StoreEvent::Session {
        token_hash: hash.into(),
        player_id: player.into(),
        name: name.into(),
    };
    let account = |e| StoreEvent::Account(e);
    let events = vec![
        session("h1", "p1", "Ann"),
        session("h2", "p2", "Bob"),
        created("clocked", "p1", true, fischer),
        mv("clocked", 1, [7, 7], Some([59_500, 60_000])),
        mv("clocked", 2, [8, 8], Some([59_500, 58_000])),
        mv("clocked", 3, [9, 9], Some([57_000, 58_000])),
        StoreEvent::Takeback {
            room_id: "clocked".into(),
            seq: 4,
            plies: 2,
        },
        mv("clocked", 5, [6, 6], Some([57_000, 57_500])),
        StoreEvent::Chat {
            room_id: "clocked".into(),
            seat: Seat::X,
            name: "Ann (2)".into(),
            text: "gl hf".into(),
            at: 1_700_000_000_000,
        },
        StoreEvent::Chat {
            room_id: "nowhere".into(),
            seat: Seat::O,
            name: "x".into(),
            text: "lost".into(),
            at: 1,
        },
        created("forfeit", "p2", false, TimeControl::None),
        mv("forfeit", 1, [1, 1], None),
        StoreEvent::Result {
            room_id: "forfeit".into(),
            seq: 2,
            result: Outcome::X,
            reason: Reason::Forfeit,
            forfeit: Some(ForfeitRecord {
                fault: "illegal_move".into(),
                detail: "played on an occupied cell".into(),
            }),
            ratings: Vec::new(),
        },
        StoreEvent::Result {
            room_id: "forfeit".into(),
            seq: 3,
            result: Outcome::O,
            reason: Reason::Resign,
            forfeit: None,
            ratings: Vec::new(),
        },
        StoreEvent::Analysis {
            game_id: "forfeit".into(),
            nodes_per_position: 1000,
            json: "{\"old\":true}".into(),
        },
        StoreEvent::Analysis {
            game_id: "forfeit".into(),
            nodes_per_position: 2000,
            json: "{\"positions\":[]}".into(),
        },
        StoreEvent::Analysis {
            game_id: "nowhere".into(),
            nodes_per_position: 1,
            json: "{}".into(),
        },
        account(AccountEvent::Created {
            player_id: "p1".into(),
            username: "Ann".into(),
            username_key: "ann".into(),
            phc: "$argon2id$one".into(),
        }),
        account(AccountEvent::Created {
            player_id: "p9".into(),
            username: "ANN".into(),
            username_key: "ann".into(),
            phc: "$argon2id$taken".into(),
        }),
        account(AccountEvent::SessionBound {
            token_hash: "h1".into(),
            player_id: "p1".into(),
        }),
        account(AccountEvent::SessionBound {
            token_hash: "h9".into(),
            player_id: "nobody".into(),
        }),
        account(AccountEvent::Password {
            player_id: "p1".into(),
            phc: "$argon2id$two".into(),
        }),
        account(AccountEvent::Created {
            player_id: "p2".into(),
            username: "Bob".into(),
            username_key: "bob".into(),
            phc: "$argon2id$bob".into(),
        }),
        account(AccountEvent::SessionBound {
            token_hash: "h2".into(),
            player_id: "p2".into(),
        }),
        account(AccountEvent::LoggedOutEverywhere {
            player_id: "p2".into(),
        }),
        StoreEvent::SessionsExpired {
            updated_before: i64::MAX,
        },
        // A rated game of p1's (an account by now) against a bot: its result carries p1's new
        // rating. Recorded twice, as after a restart: the rows count once.
        created("rated1", "p1", false, TimeControl::None),
        mv("rated1", 1, [7, 7], None),
        rated_result(1),
        rated_result(2),
    ];
    for e in events {
        wait(store.record(e)).unwrap();
    }
}

/// p1 wins "rated1" (the game's result, carrying p1's rating row).
fn rated_result(games: u32) -> StoreEvent {
    StoreEvent::Result {
        room_id: "rated1".into(),
        seq: 2,
        result: Outcome::X,
        reason: Reason::Resign,
        forfeit: None,
        ratings: vec![RatingRow {
            player_id: "p1".into(),
            family: "freestyle-untimed".into(),
            rating: 1662.3,
            deviation: 290.3,
            volatility: 0.06,
            games,
            wins: games,
            draws: 0,
            losses: 0,
            last_ms: 1_700_000_000_000,
            change: RowChange {
                from: 1500.0,
                rating: 162.3,
                wins: 1,
                ..RowChange::default()
            },
        }],
    }
}

/// Times zeroed: each store stamps events with its own clock.
fn timeless(mut g: GameRecord) -> GameRecord {
    g.summary.created_at = 0;
    g.summary.finished_at = g.summary.finished_at.map(|_| 0);
    for m in &mut g.moves {
        m.at = 0;
    }
    g
}

#[test]
fn postgres_gives_back_what_sqlite_gives_back_for_every_event() {
    let Some(url) = fresh_database("postgres_gives_back_what_sqlite_gives_back") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&dir.path().join("games.db")).unwrap();
    let postgres = PostgresStore::open(&url).unwrap();
    let stores: [&dyn Store; 2] = [&sqlite, &postgres];
    for store in stores {
        record_everything(store);
    }
    let [s, p] = stores.map(|store| {
        let games: Vec<_> = ["clocked", "forfeit", "nowhere"]
            .map(|id| store.game(id).unwrap().map(timeless))
            .into();
        let mut restored = store.restore().unwrap();
        restored.games = restored.games.into_iter().map(timeless).collect();
        let listed: Vec<String> = store
            .list_games(&GameQuery {
                player: Some("p2".into()),
                limit: 10,
                before: None,
            })
            .unwrap()
            .into_iter()
            .map(|g| g.id)
            .collect();
        let analyses = ["forfeit", "nowhere"].map(|id| store.analysis(id).unwrap());
        let mut history = store.rating_history("p1").unwrap();
        for h in &mut history {
            h.at_ms = 0;
        }
        let ratings = (
            store.ratings().unwrap(),
            history,
            store.player_record("p1").unwrap().wins,
            store.game("rated1").unwrap().map(|g| g.summary.rated),
        );
        (
            games,
            restored,
            listed,
            store.accounts().unwrap(),
            analyses,
            ratings,
        )
    });
    assert_eq!(p, s);
    // And what they agree on is right.
    let (games, restored, listed, accounts, analyses, ratings) = p;
    let (current, history, p1_wins, rated1) = ratings;
    assert_eq!(current.len(), 1);
    assert_eq!((current[0].rating, current[0].games), (1662.3, 1));
    assert_eq!(history.len(), 1, "the result recorded twice counts once");
    assert_eq!(
        (history[0].game_id.as_str(), history[0].rating),
        ("rated1", 1662.3)
    );
    assert_eq!(p1_wins, 1);
    assert_eq!(rated1, Some(true));
    let clocked = games[0].as_ref().unwrap();
    assert_eq!(clocked.seq, 5);
    let cells: Vec<_> = clocked.moves.iter().map(|m| (m.x, m.y, m.clock)).collect();
    assert_eq!(
        cells,
        [
            (7, 7, Some([59_500, 60_000])),
            (6, 6, Some([57_000, 57_500]))
        ]
    );
    assert_eq!(clocked.chat.len(), 1);
    assert!(clocked.summary.casual && clocked.summary.time_control.is_some());
    let forfeit = &games[1].as_ref().unwrap().summary;
    assert_eq!(forfeit.reason.as_deref(), Some("forfeit"));
    assert_eq!(forfeit.fault.as_deref(), Some("illegal_move"));
    assert!(games[2].is_none());
    assert_eq!(restored.games.len(), 1);
    let sessions: Vec<_> = restored.sessions.iter().map(|s| &s.token_hash).collect();
    assert_eq!(sessions, ["h1"]);
    assert_eq!(listed, ["forfeit"]);
    assert_eq!(accounts.accounts.len(), 2);
    assert_eq!(accounts.accounts[0].phc, "$argon2id$two");
    assert_eq!(accounts.tokens, [("h1".to_string(), "p1".to_string())]);
    assert_eq!(analyses, [Some("{\"positions\":[]}".to_string()), None]);
    assert_eq!(
        postgres.account_of_token("h1").unwrap().map(|a| a.username),
        Some("Ann".to_string())
    );
    assert_eq!(postgres.account_of_token("h2").unwrap(), None);
    // A move of a game PostgreSQL does not have is dropped, and the batch commits (SQLite's
    // foreign key would fail the batch instead).
    wait(postgres.record(mv("nowhere", 1, [0, 0], None))).unwrap();
    assert!(postgres.game("nowhere").unwrap().is_none());
}

#[test]
fn a_database_newer_than_the_server_is_refused_and_a_current_one_reopens() {
    let Some(url) = fresh_database("a_database_newer_than_the_server") else {
        return;
    };
    drop(PostgresStore::open(&url).unwrap());
    let store = PostgresStore::open(&url).unwrap();
    let newer = MIGRATIONS.len() as i32 + 1;
    let pool = store.pool.clone();
    store
        .block(async move {
            pool.get()
                .await?
                .execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)",
                    &[&newer],
                )
                .await?;
            Ok(())
        })
        .unwrap();
    drop(store);
    let Err(e) = PostgresStore::open(&url) else {
        panic!("a newer database was opened");
    };
    assert_eq!(
        e.to_string(),
        format!(
            "the database has schema version {newer}, newer than this server's {}",
            MIGRATIONS.len()
        )
    );
}

/// PostgreSQL drops the store's connections (as a restart of the server does): a batch may fail
/// with the error (its waiters learn that nothing is durable), and the next one commits on a new
/// connection, with no restart of the store.
#[test]
fn after_its_connections_are_dropped_the_store_commits_again_on_new_ones() {
    let Some(url) = fresh_database("after_its_connections_are_dropped") else {
        return;
    };
    let store = PostgresStore::open(&url).unwrap();
    commit(&store, created("g", "p1", false, TimeControl::None)).unwrap();
    let admin_url = url.clone();
    let dropped = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (admin, conn) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            let rows = admin
                .query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    &[],
                )
                .await
                .unwrap();
            rows.len()
        })
    })
    .join()
    .unwrap();
    assert!(dropped >= 1, "the store held no connection");
    // At most one batch fails on a dead connection; bounded attempts.
    let mut failures = 0;
    let mut seq = 0;
    for _ in 0..3 {
        seq += 1;
        match commit(&store, mv("g", seq, [seq as u8, 0], None)) {
            Ok(()) => break,
            Err(_) => failures += 1,
        }
    }
    assert!(failures <= 1, "{failures} batches failed");
    let g = store.game("g").unwrap().unwrap();
    assert_eq!(g.moves.last().map(|m| m.seq), Some(seq), "{g:?}");
}

/// Two nodes' stores on one fresh database.
fn two_nodes(test: &str) -> Option<(PostgresStore, PostgresStore)> {
    let url = fresh_database(test)?;
    Some((
        PostgresStore::open(&url).unwrap(),
        PostgresStore::open(&url).unwrap(),
    ))
}

#[test]
fn a_node_whose_room_another_node_took_commits_nothing_more_for_it() {
    let Some((a, b)) = two_nodes("fenced_commits") else {
        return;
    };
    let owner = |node: &str| StoreEvent::Owner {
        room_id: "g".into(),
        node: node.into(),
    };
    commit(&a, owner("a")).unwrap();
    commit(&a, created("g", "p1", false, TimeControl::None)).unwrap();
    commit(&a, mv("g", 1, [7, 7], None)).unwrap();
    // Node b takes the room over (its fence is raised past a's), and plays on.
    commit(&b, owner("b")).unwrap();
    commit(&b, mv("g", 2, [8, 8], None)).unwrap();
    // a, paused meanwhile, wakes up and tries to commit a move of its own: refused, and so is
    // everything else it has for the room; its events of other rows still commit.
    let late = a.record(mv("g", 2, [0, 0], None));
    let other = a.record(StoreEvent::Session {
        token_hash: "h9".into(),
        player_id: "p9".into(),
        name: "Zed".into(),
    });
    let err = wait(late).unwrap_err();
    assert!(err.to_string().contains("fenced"), "{err}");
    wait(other).unwrap();
    let err = commit(&a, mv("g", 3, [1, 1], None)).unwrap_err();
    assert!(err.to_string().contains("fenced"), "{err}");
    commit(&b, mv("g", 3, [9, 9], None)).unwrap();
    let g = b.game("g").unwrap().unwrap();
    let cells: Vec<_> = g.moves.iter().map(|m| (m.seq, m.x, m.y)).collect();
    assert_eq!(cells, [(1, 7, 7), (2, 8, 8), (3, 9, 9)], "{g:?}");
}

#[test]
fn a_username_claimed_through_one_node_is_taken_for_the_other() {
    let Some((a, b)) = two_nodes("claimed_usernames") else {
        return;
    };
    let new = |player: &str, name: &str| NewAccount {
        player_id: player.into(),
        username: name.into(),
        username_key: name.to_lowercase(),
        phc: format!("phc of {player}"),
    };
    assert_eq!(
        a.claim_account(&new("p1", "Dana")).unwrap(),
        AccountClaim::Written
    );
    // Another player, through the other node: the name is taken, in any case.
    assert_eq!(
        b.claim_account(&new("p2", "dana")).unwrap(),
        AccountClaim::Taken
    );
    // The same claim again (a retry whose first answer was lost) stands, with the retry's
    // password; the same player under another name does not.
    let retry = NewAccount {
        phc: "phc of the retry".into(),
        ..new("p1", "Dana")
    };
    assert_eq!(b.claim_account(&retry).unwrap(), AccountClaim::Written);
    assert_eq!(
        b.claim_account(&new("p1", "Other")).unwrap(),
        AccountClaim::AlreadyAccount
    );
    let stored = b.account_by_username("dana").unwrap().unwrap();
    assert_eq!(
        (stored.player_id.as_str(), stored.phc.as_str()),
        ("p1", "phc of the retry")
    );
    assert_eq!(b.account_by_username("other").unwrap(), None);
    // p2 is still free to take another name.
    assert_eq!(
        a.claim_account(&new("p2", "Eve")).unwrap(),
        AccountClaim::Written
    );
}

#[test]
fn two_rated_games_of_one_account_ending_together_on_two_nodes_both_count() {
    let Some((a, b)) = two_nodes("rating_race") else {
        return;
    };
    commit(
        &a,
        StoreEvent::Account(AccountEvent::Created {
            player_id: "p1".into(),
            username: "Ann".into(),
            username_key: "ann".into(),
            phc: "phc".into(),
        }),
    )
    .unwrap();
    // p1's row after one game, as both nodes' books have it; then a game on each node, each
    // settled from that row.
    let row = |rating: f64, games: u32, w: u32, l: u32, change: RowChange| RatingRow {
        player_id: "p1".into(),
        family: "freestyle-untimed".into(),
        rating,
        deviation: 200.0,
        volatility: 0.06,
        games,
        wins: w,
        draws: 0,
        losses: l,
        last_ms: 1_700_000_000_000 + i64::from(games),
        change,
    };
    let result = |id: &str, result: Outcome, r: RatingRow| StoreEvent::Result {
        room_id: id.into(),
        seq: 5,
        result,
        reason: Reason::Resign,
        forfeit: None,
        ratings: vec![r],
    };
    let won = |from, rating| RowChange {
        from,
        rating,
        wins: 1,
        ..RowChange::default()
    };
    for (store, id) in [(&a, "g0"), (&a, "g1"), (&b, "g2")] {
        commit(store, created(id, "p1", false, TimeControl::None)).unwrap();
    }
    commit(
        &a,
        result("g0", Outcome::X, row(1600.0, 1, 1, 0, won(1500.0, 100.0))),
    )
    .unwrap();
    let lost = RowChange {
        from: 1600.0,
        rating: -40.0,
        losses: 1,
        ..RowChange::default()
    };
    commit(
        &a,
        result("g1", Outcome::X, row(1650.0, 2, 2, 0, won(1600.0, 50.0))),
    )
    .unwrap();
    // A third game, settled from g2's row (which B has published but not yet committed) by a
    // node whose book took it: the database's row has as many games but another rating, so
    // this game is added, not put in g1's place.
    commit(&a, created("g3", "p1", false, TimeControl::None)).unwrap();
    commit(
        &a,
        result("g3", Outcome::X, row(1580.0, 3, 2, 1, won(1560.0, 20.0))),
    )
    .unwrap();
    commit(&b, result("g2", Outcome::O, row(1560.0, 2, 1, 1, lost))).unwrap();
    // All count, each once: 1600 + 50 (g1) + 20 (g3) - 40 (g2).
    let now = b.ratings().unwrap();
    assert_eq!(
        now,
        [RatingRow {
            last_ms: 1_700_000_000_003,
            change: RowChange::default(),
            ..row(1630.0, 4, 3, 1, RowChange::default())
        }]
    );
    // (By game: the history's order is the stores' clocks, which can tie within a millisecond.)
    let mut history: Vec<_> = a
        .rating_history("p1")
        .unwrap()
        .into_iter()
        .map(|h| (h.game_id, h.rating))
        .collect();
    history.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        history,
        [
            ("g0".to_string(), 1600.0),
            ("g1".to_string(), 1650.0),
            ("g2".to_string(), 1630.0),
            ("g3".to_string(), 1670.0)
        ]
    );
}

/// The rooms of `room_owners`, by id.
fn owner_rows(store: &PostgresStore) -> Vec<String> {
    let pool = store.pool.clone();
    store
        .block(async move {
            let client = pool.get().await?;
            let rows = client
                .query("SELECT room_id FROM room_owners ORDER BY room_id", &[])
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
        .unwrap()
}

#[test]
fn the_fences_of_games_finished_long_ago_go_with_the_session_purge() {
    let Some(url) = fresh_database("fence_purge") else {
        return;
    };
    let store = PostgresStore::open(&url).unwrap();
    for id in ["done", "live"] {
        commit(
            &store,
            StoreEvent::Owner {
                room_id: id.into(),
                node: "a".into(),
            },
        )
        .unwrap();
        commit(&store, created(id, "p1", false, TimeControl::None)).unwrap();
        commit(&store, mv(id, 1, [7, 7], None)).unwrap();
    }
    commit(
        &store,
        StoreEvent::Result {
            room_id: "done".into(),
            seq: 2,
            result: Outcome::X,
            reason: Reason::Resign,
            forfeit: None,
            ratings: Vec::new(),
        },
    )
    .unwrap();
    let fences = || owner_rows(&store);
    assert_eq!(fences(), ["done", "live"]);
    // A finished game is no room of its node's any more.
    assert_eq!(store.fenced_rooms("a", i64::MAX).unwrap(), ["live"]);
    // A purge of what is older than now: the finished game's fence goes, the live one's stays.
    commit(
        &store,
        StoreEvent::SessionsExpired {
            updated_before: crate::store::now_ms() + 1,
        },
    )
    .unwrap();
    assert_eq!(fences(), ["live"]);
    // This store still holds the gone fence: anything more for that room is refused.
    let err = commit(&store, mv("done", 2, [0, 0], None)).unwrap_err();
    assert!(err.to_string().contains("fenced"), "{err}");
    commit(&store, mv("live", 2, [8, 8], None)).unwrap();
}

/// Regression: a room that closed before its game started kept its `room_owners` row for
/// good, and a release dropped the fence at once, so a move still queued for a room another
/// node had taken was committed unchecked.
#[test]
fn a_room_closed_before_its_game_started_leaves_no_fence_row() {
    let Some((a, b)) = two_nodes("released_fences") else {
        return;
    };
    let owner = |room: &str, node: &str| StoreEvent::Owner {
        room_id: room.into(),
        node: node.into(),
    };
    for room in ["waiting", "started", "lost", "lost_waiting"] {
        commit(&a, owner(room, "a")).unwrap();
    }
    commit(&a, created("started", "p1", false, TimeControl::None)).unwrap();
    commit(&a, created("lost", "p1", false, TimeControl::None)).unwrap();
    // b takes "lost" and "lost_waiting" over while a still has a move of "lost" queued, then
    // a closes every room.
    commit(&b, owner("lost", "b")).unwrap();
    commit(&b, owner("lost_waiting", "b")).unwrap();
    let before_b = crate::store::now_ms() + 1;
    let late = a.record(mv("lost", 1, [0, 0], None));
    for room in ["waiting", "started", "lost", "lost_waiting"] {
        a.release_room(room);
    }
    // The move queued before the release is still checked against a's fence: refused.
    let err = wait(late).unwrap_err();
    assert!(err.to_string().contains("fenced"), "{err}");
    a.flush();
    // The room without a game loses its row; a stored game keeps its (restorable, purged once
    // finished); the rooms b took keep b's rows, game or not.
    assert_eq!(owner_rows(&a), ["lost", "lost_waiting", "started"]);
    // What the sweep asks for the rooms of gone nodes: unfinished games and unstarted rooms,
    // raised before a time.
    assert_eq!(a.fence_nodes().unwrap(), ["a", "b"]);
    assert_eq!(a.fenced_rooms("a", i64::MAX).unwrap(), ["started"]);
    assert_eq!(
        b.fenced_rooms("b", before_b).unwrap(),
        ["lost", "lost_waiting"]
    );
    commit(&b, owner("late", "b")).unwrap();
    assert_eq!(
        b.fenced_rooms("b", before_b).unwrap(),
        ["lost", "lost_waiting"]
    );
    assert!(b.game("lost").unwrap().unwrap().moves.is_empty());
    commit(&b, mv("lost", 1, [7, 7], None)).unwrap();
}
