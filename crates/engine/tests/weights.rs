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
