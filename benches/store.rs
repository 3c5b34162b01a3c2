//! Moves per second through the SQLite store with durability on (WAL, `synchronous = FULL`: one
//! fsync per commit), the way rooms use it: record a move, wait for its commit, only then go on.
//!
//! - sequential: one game, each move waits for its own commit (one fsync per move);
//! - concurrent: N games at once, each still waiting for every commit; the writer thread's
//!   group commit lets them share fsyncs.
//!
//! Run: `cargo bench --bench store` (prints the median of 5 runs). Numbers: docs/persistence.md.

use std::sync::Arc;
use std::time::Instant;

use caro_arena::protocol::Seat;
use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::{GameCreated, SeatRecord, Store, StoreEvent};

const RUNS: usize = 5;

fn created(id: &str) -> StoreEvent {
    StoreEvent::Created(GameCreated {
        room_id: id.into(),
        game: "caro",
        width: 32,
        height: 32,
        rule: Some("freestyle"),
        time_control: caro_arena::protocol::TimeControl::None,
        seats: [
            SeatRecord::Bot { level: "a".into() },
            SeatRecord::Bot { level: "b".into() },
        ],
        casual: false,
        rated: false,
    })
}

async fn play(store: Arc<dyn Store>, id: String, moves: u64) {
    store.record(created(&id)).wait().await.unwrap();
    for seq in 1..=moves {
        let ev = StoreEvent::Move {
            room_id: id.clone(),
            seq,
            seat: if seq % 2 == 1 { Seat::X } else { Seat::O },
            cell: [(seq % 32) as u8, (seq / 32 % 32) as u8],
            clock: None,
        };
        store.record(ev).wait().await.unwrap();
    }
}

/// Moves per second for `games` concurrent games of `moves` moves each, on a fresh file.
fn run(games: usize, moves: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db")).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let start = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..games)
            .map(|g| tokio::spawn(play(store.clone(), format!("g{g}"), moves)))
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    (games as u64 * moves) as f64 / start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    for (games, moves) in [(1, 1000), (16, 200), (64, 100)] {
        let rates: Vec<f64> = (0..RUNS).map(|_| run(games, moves)).collect();
        println!(
            "{games:>3} concurrent game(s) x {moves} moves: median {:>8.0} moves/s (runs: {})",
            median(rates.clone()),
            rates
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
