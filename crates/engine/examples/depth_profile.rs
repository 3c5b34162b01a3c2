use caro_engine::positions::parse;
use caro_engine::search::{Engine, Limits};
use std::sync::atomic::AtomicBool;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u8 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/positions/midgame15.pos"
    ))
    .unwrap();
    let stop = AtomicBool::new(false);
    let mut tot = vec![0u64; depth as usize + 1];
    for p in parse(&text).unwrap() {
        let board = p.board().unwrap();
        let mut e = Engine::new(64);
        let mut last = 0;
        print!("{:28}", &p.id[9..]);
        e.search(&board, &Limits::depth(depth), &stop, &mut |i| {
            print!(" d{}:{}", i.depth, i.nodes - last);
            tot[i.depth as usize] += i.nodes - last;
            last = i.nodes;
        });
        println!();
    }
    println!("totals per iteration: {:?}", tot);
}
