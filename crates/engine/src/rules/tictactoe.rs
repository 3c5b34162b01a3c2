//! Tic-tac-toe and the m,n,k game. The rules are the freestyle rule with a win length of `k`
//! ([`Rules::mnk`](super::Rules::mnk)); this module holds what is special to the small board:
//! the count of reachable positions that the exhaustive tests rely on.

#[cfg(test)]
mod tests {
    use crate::{Board, Rules, Status};
    use std::collections::HashSet;

    /// Walks every game of tic-tac-toe; the classic numbers are 255,168 games and 5,478 positions.
    #[test]
    fn all_games_and_positions_of_tictactoe() {
        fn walk(board: &mut Board, seen: &mut HashSet<u64>, games: &mut u64) {
            seen.insert(board.hash());
            if board.status() != Status::Ongoing {
                *games += 1;
                return;
            }
            let moves: Vec<_> = board.legal_moves().collect();
            for mv in moves {
                board.play(mv);
                walk(board, seen, games);
                board.undo();
            }
        }
        let mut board = Board::new(Rules::tictactoe());
        let mut seen = HashSet::new();
        let mut games = 0;
        walk(&mut board, &mut seen, &mut games);
        assert_eq!(games, 255_168);
        assert_eq!(seen.len(), 5_478);
    }
}
