//! The rules, checked against a from-scratch referee: every rule variant, wins in every direction
//! and at the edges, overlines, fives blocked at both ends, typed move errors, and exact undo
//! (hash and status included) after any sequence of moves.

use caro_engine::{Board, Cell, Move, MoveError, Player, Rule, Rules, Status};
use proptest::prelude::*;

/// The referee: decides the status of a board from scratch, without the engine's own rule code.
/// It copies the stones into a plain grid, walks every maximal run in the four directions with
/// plain loops, and applies the table of docs/rules.md (exact length, overlines, "blocked at both
/// ends" with the edge never blocking) written out again here. Only the side that moved last can
/// have a winning run (the game stops at the first one).
fn referee(board: &Board) -> Status {
    let rules = board.rules();
    let (w, h) = (board.width() as i64, board.height() as i64);
    let k = rules.win_length() as i64;
    // `None` is an empty cell; off the board is handled by `at` returning `Edge`.
    let grid: Vec<Vec<Option<Player>>> = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| match board.get(x, y) {
                    Cell::X => Some(Player::X),
                    Cell::O => Some(Player::O),
                    _ => None,
                })
                .collect()
        })
        .collect();
    #[derive(PartialEq)]
    enum Beyond {
        Edge,
        Empty,
        Stone(Player),
    }
    let at = |x: i64, y: i64| {
        if x < 0 || y < 0 || x >= w || y >= h {
            Beyond::Edge
        } else {
            match grid[y as usize][x as usize] {
                None => Beyond::Empty,
                Some(p) => Beyond::Stone(p),
            }
        }
    };
    // (overline wins, blocks deny a five, blocks deny an overline)
    let (overline_wins, blocks_count, blocks_overline) = match rules.rule() {
        Rule::Freestyle => (true, false, false),
        Rule::ExactFive => (false, false, false),
        Rule::Caro => (false, true, true),
        Rule::CaroOverline => (true, true, true),
        Rule::CaroGomocup => (true, true, false),
    };
    for y in 0..h {
        for x in 0..w {
            let Some(p) = grid[y as usize][x as usize] else {
                continue;
            };
            for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                // Only start counting at the first stone of a run.
                if at(x - dx, y - dy) == Beyond::Stone(p) {
                    continue;
                }
                let mut len = 0;
                while at(x + dx * len, y + dy * len) == Beyond::Stone(p) {
                    len += 1;
                }
                let long_enough = len == k || (overline_wins && len > k);
                let opponent = Beyond::Stone(p.opponent());
                let blocked_both =
                    at(x - dx, y - dy) == opponent && at(x + dx * len, y + dy * len) == opponent;
                let blocks = if len > k {
                    blocks_overline
                } else {
                    blocks_count
                };
                if long_enough && !(blocks && blocked_both) {
                    return Status::Won(p);
                }
            }
        }
    }
    if grid.iter().flatten().all(Option::is_some) {
        Status::Draw
    } else {
        Status::Ongoing
    }
}

/// A cell as `(x, y)`.
type Cellxy = (u8, u8);

fn caro(rule: Rule) -> Rules {
    Rules::caro(15, 15, rule).unwrap()
}

/// Plays X's stones at `xs` and O's at `os`, alternating (O's extra moves fill spare cells far
/// away when X has more to place). Returns the board after X's last stone.
fn build(rules: Rules, xs: &[(u8, u8)], os: &[(u8, u8)]) -> Board {
    let mut x_stones: Vec<Move> = xs.iter().map(|&(x, y)| Move::new(x, y)).collect();
    let mut o_stones: Vec<Move> = os.iter().map(|&(x, y)| Move::new(x, y)).collect();
    // Pad so that X's last stone is played last: O needs len(xs) - 1 stones. Fillers sit two
    // cells apart along the bottom-right, so they never make a line of their own.
    let mut fillers: Vec<Move> = (0..rules.height())
        .rev()
        .step_by(2)
        .flat_map(|y| {
            (0..rules.width())
                .rev()
                .step_by(2)
                .map(move |x| Move::new(x, y))
        })
        .filter(|m| !x_stones.contains(m) && !o_stones.contains(m))
        .collect();
    fillers.reverse();
    while o_stones.len() + 1 < x_stones.len() {
        o_stones.push(fillers.pop().unwrap());
    }
    while x_stones.len() < o_stones.len() + 1 {
        x_stones.insert(0, fillers.pop().unwrap());
    }
    let mut board = Board::new(rules);
    for (i, &xm) in x_stones.iter().enumerate() {
        board.play(xm);
        if i < o_stones.len() {
            board.play(o_stones[i]);
        }
    }
    board
}

#[test]
fn a_five_wins_in_every_direction_with_any_stone_last() {
    let lines: [[(u8, u8); 5]; 4] = [
        [(3, 4), (4, 4), (5, 4), (6, 4), (7, 4)],
        [(4, 3), (4, 4), (4, 5), (4, 6), (4, 7)],
        [(3, 3), (4, 4), (5, 5), (6, 6), (7, 7)],
        [(7, 3), (6, 4), (5, 5), (4, 6), (3, 7)],
    ];
    for rule in Rule::ALL {
        for line in lines {
            for last in 0..5 {
                let mut order = line.to_vec();
                let l = order.remove(last);
                order.push(l);
                let board = build(caro(rule), &order, &[]);
                assert_eq!(board.status(), Status::Won(Player::X), "{rule} {line:?}");
                let mut got = board.winning_line().unwrap().to_vec();
                got.sort();
                let mut want: Vec<Move> = line.iter().map(|&(x, y)| Move::new(x, y)).collect();
                want.sort();
                assert_eq!(got, want, "the line lists exactly the five cells");
            }
        }
    }
}

#[test]
fn fives_along_the_edges_and_into_the_corners_win_under_every_rule() {
    // The edge never blocks, so these win under caro too, even with an opponent stone at the
    // other end.
    let cases: [(&[Cellxy], &[Cellxy]); 4] = [
        (&[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)], &[(5, 0)]),
        (
            &[(14, 10), (14, 11), (14, 12), (14, 13), (14, 14)],
            &[(14, 9)],
        ),
        (
            &[(10, 10), (11, 11), (12, 12), (13, 13), (14, 14)],
            &[(9, 9)],
        ),
        (&[(0, 14), (1, 13), (2, 12), (3, 11), (4, 10)], &[(5, 9)]),
    ];
    for rule in Rule::ALL {
        for (xs, os) in cases {
            let board = build(caro(rule), xs, os);
            assert_eq!(board.status(), Status::Won(Player::X), "{rule} {xs:?}");
        }
    }
}

#[test]
fn a_five_blocked_at_both_ends_wins_only_without_the_caro_rule() {
    let xs = [(3, 7), (4, 7), (5, 7), (6, 7), (7, 7)];
    let os = [(2, 7), (8, 7)];
    for (rule, won) in [
        (Rule::Freestyle, true),
        (Rule::ExactFive, true),
        (Rule::Caro, false),
        (Rule::CaroOverline, false),
        (Rule::CaroGomocup, false),
    ] {
        let board = build(caro(rule), &xs, &os);
        let expected = if won {
            Status::Won(Player::X)
        } else {
            Status::Ongoing
        };
        assert_eq!(board.status(), expected, "{rule}");
        assert_eq!(referee(&board), expected, "{rule}: the referee agrees");
    }
}

#[test]
fn an_overline_wins_only_where_the_rule_allows_it() {
    // Six in a row, the gap at (5, 7) filled last.
    let xs = [(2, 7), (3, 7), (4, 7), (6, 7), (7, 7), (5, 7)];
    for (rule, won) in [
        (Rule::Freestyle, true),
        (Rule::ExactFive, false),
        (Rule::Caro, false),
        (Rule::CaroOverline, true),
        (Rule::CaroGomocup, true),
    ] {
        let board = build(caro(rule), &xs, &[]);
        assert_eq!(board.status() == Status::Won(Player::X), won, "{rule}");
        if won {
            assert_eq!(board.winning_line().unwrap().len(), 6);
        }
    }
    // Under caro_overline an overline blocked at both ends does not win either.
    let board = build(caro(Rule::CaroOverline), &xs, &[(1, 7), (8, 7)]);
    assert_eq!(board.status(), Status::Ongoing);
    // Gomocup's referee (rule 8, `caro_gomocup`) counts it: the game against Pela that lost to
    // an overline of six blocked by our stones at both ends.
    let board = build(caro(Rule::CaroGomocup), &xs, &[(1, 7), (8, 7)]);
    assert_eq!(board.status(), Status::Won(Player::X));
    assert_eq!(referee(&board), Status::Won(Player::X));
}

#[test]
fn a_blocked_line_does_not_hide_an_open_one_through_the_same_stone() {
    // (7,7) completes a doubly blocked horizontal five and an open vertical five.
    let xs = [
        (3, 7),
        (4, 7),
        (5, 7),
        (6, 7),
        (7, 3),
        (7, 4),
        (7, 5),
        (7, 6),
        (7, 7),
    ];
    let board = build(caro(Rule::Caro), &xs, &[(2, 7), (8, 7)]);
    assert_eq!(board.status(), Status::Won(Player::X));
    assert!(board.winning_line().unwrap().iter().all(|m| m.x == 7));
}

#[test]
fn move_errors_are_typed_and_change_nothing() {
    let mut board = Board::new(Rules::tictactoe());
    board.play(Move::new(1, 1));
    let before = (board.hash(), board.moves().to_vec());
    assert_eq!(
        board.try_play(Move::new(3, 0)),
        Err(MoveError::OutOfBounds { x: 3, y: 0 })
    );
    assert_eq!(
        board.try_play(Move::new(1, 1)),
        Err(MoveError::Occupied { x: 1, y: 1 })
    );
    assert_eq!(
        board.check(-1, 0),
        Err(MoveError::OutOfBounds { x: -1, y: 0 })
    );
    assert_eq!((board.hash(), board.moves().to_vec()), before);
    for mv in [(0, 0), (2, 0), (0, 1), (0, 2)] {
        board.play(Move::new(mv.0, mv.1));
    }
    // X: (1,1) (2,0) (0,2) is a diagonal three.
    assert_eq!(board.status(), Status::Won(Player::X));
    assert_eq!(board.try_play(Move::new(2, 2)), Err(MoveError::GameOver));
}

#[test]
fn a_full_board_without_a_line_is_a_draw() {
    let mut board = Board::new(Rules::tictactoe());
    for (x, y) in [
        (0, 0),
        (1, 1),
        (2, 2),
        (0, 1),
        (2, 1),
        (2, 0),
        (0, 2),
        (1, 2),
        (1, 0),
    ] {
        board.play(Move::new(x, y));
    }
    assert_eq!(board.status(), Status::Draw);
    assert_eq!(board.winning_line(), None);
    board.undo();
    assert_eq!(board.status(), Status::Ongoing);
}

fn rules_strategy() -> impl Strategy<Value = Rules> {
    prop_oneof![
        (5u8..=9, 5u8..=9, 0usize..Rule::ALL.len()).prop_map(|(w, h, r)| Rules::caro(
            w,
            h,
            Rule::ALL[r]
        )
        .unwrap()),
        (3u8..=5, 3u8..=5).prop_map(|(w, h)| Rules::mnk(w, h, 3).unwrap()),
        Just(Rules::caro(15, 15, Rule::Caro).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random games: after every move the incremental status equals the referee's, a win's line
    /// runs through the last move, and undoing everything restores the exact empty board.
    #[test]
    fn random_games_agree_with_the_referee_and_undo_exactly(
        rules in rules_strategy(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..200),
    ) {
        let mut board = Board::new(rules);
        let mut snapshots = vec![(board.hash(), board.status())];
        for pick in picks {
            let legal: Vec<Move> = board.legal_moves().collect();
            if legal.is_empty() {
                break;
            }
            let mv = *pick.get(&legal);
            let status = board.try_play(mv).unwrap();
            prop_assert_eq!(status, referee(&board));
            if let Status::Won(_) = status {
                prop_assert!(board.winning_line().unwrap().contains(&mv));
            }
            snapshots.push((board.hash(), board.status()));
        }
        while board.undo().is_some() {
            snapshots.pop();
            prop_assert_eq!((board.hash(), board.status()), *snapshots.last().unwrap());
        }
        prop_assert_eq!(board.hash(), 0);
        prop_assert_eq!(board.legal_moves().count(), rules.cells());
    }

    /// Two move orders reaching the same position give the same hash.
    #[test]
    fn transpositions_hash_alike(
        cells in prop::sample::subsequence((0u8..15).flat_map(|y| (0u8..15).map(move |x| (x, y))).collect::<Vec<_>>(), 2..24),
        seed in any::<u64>(),
    ) {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let n = cells.len() / 2 * 2;
        let xs: Vec<Move> = cells[..n].iter().step_by(2).map(|&(x, y)| Move::new(x, y)).collect();
        let os: Vec<Move> = cells[1..n].iter().step_by(2).map(|&(x, y)| Move::new(x, y)).collect();
        // A deterministic shuffle of each side's stones.
        let shuffle = |v: &[Move], s: u64| {
            let mut v = v.to_vec();
            let len = v.len();
            for i in (1..len).rev() {
                let j = ((s.wrapping_mul(6364136223846793005).wrapping_add(i as u64)) >> 33) as usize % (i + 1);
                v.swap(i, j);
            }
            v
        };
        let play = |xs: &[Move], os: &[Move]| {
            let mut b = Board::new(rules);
            for (x, o) in xs.iter().zip(os) {
                if b.try_play(*x).is_err() || b.try_play(*o).is_err() {
                    return None; // someone won on the way: not comparable
                }
            }
            (b.status() == Status::Ongoing).then(|| b.hash())
        };
        let a = play(&xs, &os);
        let b = play(&shuffle(&xs, seed), &shuffle(&os, seed ^ 0xABCD));
        if let (Some(a), Some(b)) = (a, b) {
            prop_assert_eq!(a, b);
            let set_up = Board::set_up(rules, &xs, &os).unwrap();
            prop_assert_eq!(set_up.hash(), a);
        }
    }
}
