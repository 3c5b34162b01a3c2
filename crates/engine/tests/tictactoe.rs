//! The top bot level plays tic-tac-toe perfectly: from every reachable position, whichever side
//! it plays, it never loses, and it solves the empty board as a draw.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use caro_engine::bot::{Bot, Level, Style};
use caro_engine::search::{Engine, Limits};
use caro_engine::{Board, Player, Rules, Status};

fn top() -> Level {
    Level {
        style: Style::Full,
        max_depth: 64,
        time: Duration::from_secs(10),
        blunder: 0.0,
        search: caro_engine::bot::level_params(),
    }
}

/// The game-theoretic value for `bot_side` of `board` with the bot choosing its moves and the
/// opponent trying every reply: 1 win, 0 draw, -1 loss. Memoised by hash (the side to move
/// follows from the stone count).
fn walk(
    board: &mut Board,
    bot: &mut Bot,
    bot_side: Player,
    seen: &mut HashMap<u64, i32>,
    visited: &mut usize,
) -> i32 {
    if let Some(&v) = seen.get(&board.hash()) {
        return v;
    }
    *visited += 1;
    let value = match board.status() {
        Status::Won(p) if p == bot_side => 1,
        Status::Won(_) => -1,
        Status::Draw => 0,
        Status::Ongoing if board.to_move() == bot_side => {
            let stop = AtomicBool::new(false);
            let r = bot.choose(board, &stop, &mut |_| {}).expect("a move");
            board.play(r.best);
            let v = walk(board, bot, bot_side, seen, visited);
            board.undo();
            v
        }
        Status::Ongoing => {
            let moves: Vec<_> = board.legal_moves().collect();
            let mut worst = 1;
            for mv in moves {
                board.play(mv);
                worst = worst.min(walk(board, bot, bot_side, seen, visited));
                board.undo();
            }
            worst
        }
    };
    seen.insert(board.hash(), value);
    value
}

#[test]
fn the_top_level_never_loses_as_x_or_o() {
    for side in [Player::X, Player::O] {
        let mut bot = Bot::new(top(), 7);
        let mut board = Board::new(Rules::tictactoe());
        let mut seen = HashMap::new();
        let mut visited = 0;
        let value = walk(&mut board, &mut bot, side, &mut seen, &mut visited);
        // Perfect play draws from the start; never losing means no reachable loss at all.
        assert_eq!(value, 0, "as {side}");
        assert!(
            seen.values().all(|&v| v >= 0),
            "as {side}: a reachable loss"
        );
        assert!(visited > 100, "walked only {visited} positions");
    }
}

#[test]
fn the_top_level_never_loses_from_any_reachable_position() {
    // Every reachable position (5,478), bot to move: its move must keep the best value the
    // position has (a won position stays won, a drawn one at least drawn).
    fn solve(board: &mut Board, memo: &mut HashMap<u64, i32>) -> i32 {
        // Negamax value for the side to move.
        if let Some(&v) = memo.get(&board.hash()) {
            return v;
        }
        let v = match board.status() {
            Status::Won(_) => -1,
            Status::Draw => 0,
            Status::Ongoing => {
                let moves: Vec<_> = board.legal_moves().collect();
                let mut best = -1;
                for mv in moves {
                    board.play(mv);
                    best = best.max(-solve(board, memo));
                    board.undo();
                }
                best
            }
        };
        memo.insert(board.hash(), v);
        v
    }
    fn all(board: &mut Board, out: &mut HashMap<u64, Board>) {
        if out.contains_key(&board.hash()) {
            return;
        }
        out.insert(board.hash(), board.clone());
        if board.status() != Status::Ongoing {
            return;
        }
        let moves: Vec<_> = board.legal_moves().collect();
        for mv in moves {
            board.play(mv);
            all(board, out);
            board.undo();
        }
    }
    let mut positions = HashMap::new();
    all(&mut Board::new(Rules::tictactoe()), &mut positions);
    let mut memo = HashMap::new();
    let mut bot = Bot::new(top(), 1);
    let stop = AtomicBool::new(false);
    let mut checked = 0;
    for board in positions.values() {
        if board.status() != Status::Ongoing {
            continue;
        }
        let mut b = board.clone();
        let value = solve(&mut b, &mut memo);
        let r = bot.choose(board, &stop, &mut |_| {}).expect("a move");
        b.play(r.best);
        let after = -solve(&mut b, &mut memo);
        assert_eq!(after, value, "{board:?} bot played {}", r.best);
        checked += 1;
    }
    assert_eq!(checked, 4_520);
}

#[test]
fn the_empty_board_is_a_draw_solved_in_well_under_a_millisecond() {
    let mut engine = Engine::new(1);
    let stop = AtomicBool::new(false);
    let board = Board::new(Rules::tictactoe());
    // Warm up (the pattern tables are built on first use).
    engine.search(&board, &Limits::depth(9), &stop, &mut |_| {});
    let mut fastest = Duration::MAX;
    for _ in 0..5 {
        engine.clear();
        let start = Instant::now();
        let r = engine
            .search(&board, &Limits::depth(9), &stop, &mut |_| {})
            .unwrap();
        fastest = fastest.min(start.elapsed());
        assert_eq!(r.score, 0, "tic-tac-toe is a draw");
        assert_eq!(r.depth, 9, "solved to the end");
    }
    eprintln!("empty tic-tac-toe board solved in {fastest:?}");
}
