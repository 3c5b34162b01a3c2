//! The weights the engine is built with are the tracked file's (`search/weights.txt`, written by
//! the `texel` example): a build that embedded another copy, or a file the parser reads
//! differently, fails here.

use caro_engine::search::weights::{Weights, BUILT_TEXT};

#[test]
fn the_built_weights_are_the_files() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/search/weights.txt");
    let text = std::fs::read_to_string(path).expect("the weights file");
    assert_eq!(text, BUILT_TEXT);
    let file = Weights::parse(&text).expect("the weights file parses");
    assert_eq!(&file, Weights::built());
    assert_eq!(Weights::parse(&file.to_text()), Ok(file));
    // The values the move ordering's thresholds and the threat rules lean on stay positive and
    // ordered: a five above an open four above a four above an open three.
    assert!(file.level.iter().chain(&file.class).all(|&v| v >= 0));
    assert!(file.level[10] > file.level[9] && file.level[9] > file.level[8]);
}

/// A new table (`INFO max_memory`) keeps the weights and search numbers an engine was given:
/// the resized engine searches as a new one given the same, not as the built-in one.
#[test]
fn a_resized_table_keeps_the_weights_and_search_numbers() {
    use caro_engine::search::params::SearchParams;
    use caro_engine::search::{Engine, Limits};
    use caro_engine::{Board, Move, Rule, Rules};
    use std::sync::atomic::AtomicBool;

    let mut w = *Weights::built();
    w.plus = [0; 4];
    let sp = SearchParams {
        lmp_quarters: 12,
        ..SearchParams::default()
    };
    let given = |engine: &mut Engine| {
        engine.set_weights(&w);
        engine.set_search_params(&sp);
    };
    let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
    let moves = [(7, 7), (8, 8), (6, 8), (8, 6), (7, 9)].map(|(x, y)| Move::new(x, y));
    let board = Board::from_moves(rules, &moves).unwrap();
    let nodes = |engine: &mut Engine| {
        let stop = AtomicBool::new(false);
        let r = engine.search(&board, &Limits::depth(7), &stop, &mut |_| {});
        r.unwrap().nodes
    };
    let mut resized = Engine::new(4);
    given(&mut resized);
    nodes(&mut resized);
    resized.resize_table(2);
    let mut fresh = Engine::new(2);
    given(&mut fresh);
    let expected = nodes(&mut fresh);
    assert_eq!(nodes(&mut resized), expected);
    assert_ne!(nodes(&mut Engine::new(2)), expected);
}
