//! Playing strength through the server: a strong bot takes an immediate win, blocks a threat, and
//! never loses to a straight line or at tic-tac-toe.

mod common;

use caro_engine::{Board, Cell, Move, Player, Rules};
use common::*;
use serde_json::json;

/// The four directions of a line.
const LINES: [(i64, i64); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// Cells where `p` completes `win_length` in a row (freestyle: k or more).
fn winning_cells(board: &Board, p: Player) -> Vec<(u8, u8)> {
    cells_making(board, p, board.rules().win_length() as i64, &LINES)
}

/// Empty cells where a stone of `p` would make a run of `k` or more along one of `dirs`.
fn cells_making(board: &Board, p: Player, k: i64, dirs: &[(i64, i64)]) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    for y in 0..board.height() as i64 {
        for x in 0..board.width() as i64 {
            if board.get(x, y) != Cell::Empty {
                continue;
            }
            let wins = dirs.iter().any(|(dx, dy)| {
                let run = |sx: i64, sy: i64| {
                    let mut n = 0;
                    let (mut cx, mut cy) = (x + sx, y + sy);
                    while board.contains(cx, cy) && board.get(cx, cy).player() == Some(p) {
                        n += 1;
                        cx += sx;
                        cy += sy;
                    }
                    n
                };
                1 + run(*dx, *dy) + run(-dx, -dy) >= k
            });
            if wins {
                out.push((x as u8, y as u8));
            }
        }
    }
    out
}

/// The first cell of `order` that is still empty.
fn first_free(board: &Board, order: &[(u8, u8)]) -> (u8, u8) {
    *order
        .iter()
        .find(|(x, y)| board.get(*x as i64, *y as i64) == Cell::Empty)
        .expect("a free cell in the order")
}

/// How a duel went: the result, how many bot moves faced an immediate win of the bot's own
/// (and took it) or a single winning cell of the human's (and blocked it), and how many took a
/// cell where the human would have made `win_length - 2` or more in a row along a row of the
/// board, the way the straight-line human builds (on 15x15, a three: a bot may cut the line
/// as a two, before it is a threat, then win by its own attack).
struct Duel {
    result: String,
    wins_taken: usize,
    threats_blocked: usize,
    lines_cut: usize,
}

/// Plays a game of the human (X, choosing moves with `choose`, but always completing a line it
/// can) against the `strong` bot (O), checking every bot move.
async fn duel(
    rules: Rules,
    create_msg: serde_json::Value,
    choose: impl Fn(&Board) -> (u8, u8),
) -> Duel {
    let (mut wins_taken, mut threats_blocked, mut lines_cut) = (0, 0, 0);
    let server = start(config()).await;
    let (mut c, _) = server.hello("h").await;
    let (_, room) = create(&mut c, create_msg).await;
    let mut board = Board::new(rules);
    let human = Player::X;
    let bot = Player::O;
    let send_move = |board: &Board| {
        let wins = winning_cells(board, human);
        let (x, y) = wins.first().copied().unwrap_or_else(|| choose(board));
        json!({"type": "move", "room_id": room, "x": x, "y": y})
    };
    c.send(send_move(&board)).await;
    loop {
        let v = c.event().await;
        match v["type"].as_str().unwrap() {
            "move" => {
                let cell = (
                    v["x"].as_u64().unwrap() as u8,
                    v["y"].as_u64().unwrap() as u8,
                );
                if v["seat"] == "o" {
                    // A cell that extends one of the human's stones along the row to two or
                    // more: the bot cutting the line where it grows (it may do so at once,
                    // next to the first stone, and then win on its own row).
                    if cells_making(&board, human, 2, &[(1, 0)]).contains(&cell) {
                        lines_cut += 1;
                    }
                    let bot_wins = winning_cells(&board, bot);
                    let human_wins = winning_cells(&board, human);
                    if !bot_wins.is_empty() {
                        assert!(
                            bot_wins.contains(&cell),
                            "the bot missed an immediate win at {bot_wins:?}, played {cell:?}"
                        );
                        wins_taken += 1;
                    } else if human_wins.len() == 1 {
                        assert_eq!(cell, human_wins[0], "the bot did not block the threat");
                        threats_blocked += 1;
                    }
                }
                board.try_play(Move::new(cell.0, cell.1)).unwrap();
                if v["turn"] == "x" {
                    c.send(send_move(&board)).await;
                }
            }
            "game_over" => {
                server.stop().await;
                return Duel {
                    result: v["result"].as_str().unwrap().to_string(),
                    wins_taken,
                    threats_blocked,
                    lines_cut,
                };
            }
            other => panic!("unexpected {other}: {v}"),
        }
    }
}

#[tokio::test]
async fn strong_bot_blocks_a_straight_line_and_never_loses_to_it() {
    // The human builds a row on y = 7 outward from the centre, then on the next rows.
    let order: Vec<(u8, u8)> = (7..15)
        .chain(8..15)
        .flat_map(|y| [7u8, 8, 9, 10, 6, 11, 5, 12, 4, 13, 3, 14, 2, 1, 0].map(|x| (x, y)))
        .collect();
    let duel = duel(
        Rules::caro_default(),
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "strong"}}),
        |b| first_free(b, &order),
    )
    .await;
    assert_ne!(duel.result, "x", "the human's straight line won");
    // Not won for want of a line (a game that ended another way would pass the check above):
    // the bot had to take cells the line was growing into.
    assert!(duel.lines_cut >= 1, "the bot never cut the line");
}

#[tokio::test]
async fn strong_bot_takes_an_immediate_win_against_a_passive_player() {
    // Scattered stones two cells apart in a corner: never a threat.
    let order: Vec<(u8, u8)> = (0..8)
        .flat_map(|y| (0..8).map(move |x| (14 - 2 * x, 14 - 2 * y)))
        .filter(|(x, y)| *x < 15 && *y < 15)
        .collect();
    let duel = duel(
        Rules::caro_default(),
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "strong"}}),
        |b| first_free(b, &order),
    )
    .await;
    assert_eq!(
        duel.result, "o",
        "the bot should win against a passive player"
    );
    assert!(duel.wins_taken > 0);
}

#[tokio::test]
async fn strong_bot_never_loses_at_tictactoe() {
    let pref = [
        (1, 1),
        (0, 0),
        (2, 2),
        (0, 2),
        (2, 0),
        (1, 0),
        (0, 1),
        (2, 1),
        (1, 2),
    ];
    let duel = duel(
        Rules::tictactoe(),
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": {"bot": "strong"}}),
        |b| {
            // A sensible human: block the bot's threat, else take the best free cell.
            winning_cells(b, Player::O)
                .first()
                .copied()
                .unwrap_or_else(|| first_free(b, &pref))
        },
    )
    .await;
    assert_ne!(duel.result, "x", "a perfect tic-tac-toe player never loses");
}

#[tokio::test]
async fn strong_bot_blocks_and_wins_at_tictactoe() {
    // A careless human: corners only, never a block. After X a1, O b2 (the one reply that does
    // not lose), X c1 threatens b1: the bot must block there; then X a3 ignores the bot's own
    // threat on the middle column, which the bot must complete.
    let pref = [
        (0, 0),
        (2, 0),
        (0, 2),
        (2, 2),
        (1, 0),
        (0, 1),
        (2, 1),
        (1, 2),
        (1, 1),
    ];
    let duel = duel(
        Rules::tictactoe(),
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": {"bot": "strong"}}),
        |b| first_free(b, &pref),
    )
    .await;
    assert_eq!(duel.result, "o", "the bot wins a won position");
    assert!(duel.threats_blocked > 0, "the bot met a threat to block");
    assert!(duel.wins_taken > 0, "the bot met a win to take");
}
