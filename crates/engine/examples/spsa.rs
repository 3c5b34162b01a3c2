//! Tunes the evaluation's weights by play (`caro_engine::spsa`; docs/engine.md, "Tuning by
//! play: SPSA"): engines with the perturbed weights play game pairs in this process, and the
//! weights move toward what wins.
//!
//! `cargo run --release -p caro-engine --example spsa -- OUT [iterations] [ms-per-move]
//! [threads] [seed] [r-end] [space] [books]` (defaults: 6000 game pairs, 20 ms a move, 2
//! threads, seed 1, r_end 0.005, space `eval`, the books `freestyle15-v3.txt,
//! freestyle15-v2.txt,freestyle15.txt,caro15.txt`). The space is what is tuned: `eval` the
//! evaluation's weights (`spsa::params`), `plus` its cross-line terms alone, `search` the
//! search's numbers (`spsa::search_params`), `both` the evaluation's weights and the search's
//! numbers. A book named `caro…` is played under caro, the others under freestyle.
//!
//! Each iteration `k` draws the perturbation's signs, an opening and two random sane moves
//! after it from `seed` and `k`, and plays the opening twice, the `+` weights as X and then as
//! O, each engine keeping its tables through a game (as `pbrain-caro` does). The moves are
//! timed, so a run is not reproducible move for move (nor is the order in which the threads'
//! results arrive); run it on an otherwise idle machine. Every 250 iterations the current
//! weights are written to OUT (a `search/weights.txt` file, with the search's numbers as `#`
//! comments after them) and a line of progress to stderr, so a run can be stopped at any time.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use caro_engine::positions::parse_openings;
use caro_engine::search::params::SearchParams;
use caro_engine::search::weights::Weights;
use caro_engine::search::{Engine, Limits};
use caro_engine::selfplay;
use caro_engine::spsa::{Space, Spsa};
use caro_engine::{Move, Player, Rule, Rules, Status};

fn book(file: &str) -> Vec<Vec<Move>> {
    let path = format!("{}/../../data/openings/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_openings(&text).unwrap_or_else(|e| panic!("{path}:{}: {}", e.line, e.message))
}

/// The weights file: what made it, the numbers, then the search's numbers as comments.
fn weights_file(w: &Weights, sp: &SearchParams, spsa: &Spsa, done: u64, how: &str) -> String {
    let mut text = format!(
        "# The pattern evaluation's weights (docs/engine.md, \"Texel tuning\" and \"Tuning by \
         play: SPSA\").\n# Built into the engine with include_str! (search::weights).\n\
         # Written by the `spsa` example after {done} of {} game pairs: {how}.\n\
         # level: value of one line level (none, B1, F1, B2, F2, B3, F3, F3S, B4, F4, F5);\n\
         # class: extra value of a cell by its combined class over its four lines (none, dev,\n\
         # three, four, three-three, four-three, flex4, win); eval_class: the same, for the\n\
         # evaluation alone, the side to move's cells; eval_class_opp: the same for the\n\
         # opponent's cells, subtracted; bonus: the threat terms (an open-four square on the\n\
         # move, a four-three, a double three, the opponent's two open-four squares); plus: the\n\
         # cross-line terms (a double two, an open three or a four meeting a two or a blocked\n\
         # three on another line).\n",
        spsa.iterations
    );
    text.push_str(&w.to_text());
    let _ = writeln!(text, "# search: {sp:?}");
    text
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args.next().expect(
        "usage: spsa OUT [iterations] [ms-per-move] [threads] [seed] [r-end] [space] [books]",
    );
    let mut num = |default: f64| {
        args.next()
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let iterations = num(6000.0) as u64;
    let ms = num(20.0) as u64;
    let threads = num(2.0) as usize;
    let seed = num(1.0) as u64;
    let r_end = num(0.005);
    let space = args.next().unwrap_or_else(|| "eval".to_string());
    let space = Space::named(&space)
        .unwrap_or_else(|| panic!("space: `eval`, `plus`, `search` or `both`, not {space:?}"));
    let books = args.next().unwrap_or_else(|| {
        "freestyle15-v3.txt,freestyle15-v2.txt,freestyle15.txt,caro15.txt".to_string()
    });
    let openings: Vec<(Rule, Vec<Move>)> = books
        .split(',')
        .flat_map(|file| {
            let rule = if file.starts_with("caro") {
                Rule::Caro
            } else {
                Rule::Freestyle
            };
            book(file).into_iter().map(move |o| (rule, o))
        })
        .collect();
    let start_weights = *Weights::built();
    let start_search = SearchParams::default();
    let spsa = Mutex::new(Spsa::new(
        space.params(&start_weights, &start_search, r_end),
        iterations,
    ));
    let how = format!(
        "{ms} ms a move, r_end {r_end}, seed {seed}, {} openings of {books}, from the built \
         weights and the default search numbers",
        openings.len()
    );
    eprintln!("spsa: {iterations} pairs, {how}");
    let limits = Limits {
        max_depth: 64,
        time: Some(Duration::from_millis(ms)),
        time_max: None,
        nodes: None,
    };
    let next = AtomicU64::new(0);
    // Points of the `+` side, and games, for the progress lines.
    let tally = Mutex::new((0.0f64, 0u64));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let (mut plus_engine, mut minus_engine) = (Engine::new(4), Engine::new(4));
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= iterations {
                        break;
                    }
                    let mut rng = SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9) ^ k);
                    let (signs, hi, lo) = {
                        let s = spsa.lock().unwrap();
                        let signs: Vec<bool> =
                            (0..s.params.len()).map(|_| rng.random_bool(0.5)).collect();
                        let (hi, lo) = s.perturb(k, &signs);
                        (signs, hi, lo)
                    };
                    for (engine, values) in [(&mut plus_engine, &hi), (&mut minus_engine, &lo)] {
                        let (w, sp) = space.apply(&start_weights, &start_search, values);
                        engine.set_weights(&w);
                        engine.set_search_params(&sp);
                    }
                    let (rule, opening) = &openings[rng.random_range(0..openings.len())];
                    let rules = Rules::caro(15, 15, *rule).expect("15x15");
                    let game_seed = rng.random();
                    let mut points = 0.0;
                    for plus_is_x in [true, false] {
                        let engines = if plus_is_x {
                            [&mut plus_engine, &mut minus_engine]
                        } else {
                            [&mut minus_engine, &mut plus_engine]
                        };
                        let status =
                            selfplay::duel(rules, opening, engines, &limits, (2, 5), game_seed);
                        points += match status {
                            Status::Won(p) if (p == Player::X) == plus_is_x => 1.0,
                            Status::Won(_) => 0.0,
                            _ => 0.5,
                        };
                    }
                    let mut s = spsa.lock().unwrap();
                    s.update(k, &signs, 2.0 * points - 2.0);
                    let mut t = tally.lock().unwrap();
                    t.0 += points;
                    t.1 += 2;
                    let done = t.1 / 2;
                    if done % 250 == 0 || done == iterations {
                        let (w, sp) = space.apply(&start_weights, &start_search, &s.values());
                        let mut line = format!(
                            "{done}/{iterations} pairs, {:.0} s, + side {:.3}:",
                            started.elapsed().as_secs_f64(),
                            t.0 / t.1 as f64
                        );
                        for p in &s.params {
                            let _ = write!(line, " {}={:.1}", p.name, p.value);
                        }
                        eprintln!("{line}");
                        std::fs::write(&out, weights_file(&w, &sp, &s, done, &how))
                            .unwrap_or_else(|e| panic!("{out}: {e}"));
                    }
                }
            });
        }
    });
}
