//! Every shipped test position parses and builds a legal, unfinished board with the right side
//! to move. Guards the test data itself, which the tactical tests and benches rely on.

use caro_engine::positions::{parse, Label};
use caro_engine::Status;

#[test]
fn every_shipped_position_builds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/positions");
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pos") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let positions = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for p in positions {
            let board = p.board().unwrap_or_else(|e| panic!("{p}: {e}"));
            assert_eq!(board.to_move(), p.to_move, "{p}");
            assert_eq!(board.status(), Status::Ongoing, "{p}");
            for mv in &p.expected {
                assert!(
                    board.check(mv.x as i64, mv.y as i64).is_ok(),
                    "{p}: {mv} not legal"
                );
            }
            if matches!(
                p.label,
                Label::Win1 | Label::Block4 | Label::Defend | Label::Mate
            ) {
                assert!(!p.expected.is_empty(), "{p} lists no answer");
            }
            total += 1;
        }
    }
    assert!(total > 600, "only {total} positions");
}
