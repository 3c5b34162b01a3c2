//! Fits the learnt ordering of quiet moves (docs/engine.md, "A move ordering learnt from Rapfi's
//! moves") to the moves listed by `scripts/policy-data`, and writes a policy file in the format
//! the engine builds in (`crates/engine/src/search/policy.txt`).
//!
//! `cargo run --release -p caro-engine --example policy -- MOVES OUT [epochs]`
//!
//! Every position of `MOVES` (`rule | moves | move`) is set up and reduced to its quiet
//! candidates as the search orders them with the default search numbers
//! (`caro_engine::policy::sample`); positions with a forced reply or a tactical choice are
//! counted and left out. One game in five (a game starts where the move list stops growing) is
//! held out. The cell values' temperature is fitted on the rest, their ranking of the held-out
//! choices reported, then the model is fitted from zero and its held-out ranking reported after
//! every pass. The file holds the logits times that temperature (so a logit weighs as much
//! against the history and killer bonuses as the cell values did), shifted so that the mean
//! learnt score of the training candidates is their mean cell-value score.
//!
//! Deterministic: the same moves give the same file.

use std::time::Instant;

use caro_engine::policy::{self, Fit, Ranking, Sample, Skip};
use caro_engine::positions::parse_square;
use caro_engine::search::params::SearchParams;
use caro_engine::search::position::Position;
use caro_engine::{Board, Rule, Rules};

fn show(name: &str, r: &Ranking) {
    println!(
        "{name}: loss {:.4}, chosen first {:.3}, in the first 3 {:.3}, 5 {:.3}, 10 {:.3}, mean rank {:.2}",
        r.nll, r.top[0], r.top[1], r.top[2], r.top[3], r.mean_rank
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: policy MOVES OUT [epochs]";
    let input = args.next().expect(usage);
    let out = args.next().expect(usage);
    let epochs: usize = args.next().map_or(6, |s| s.parse().expect("a number"));
    let start = Instant::now();
    let text = std::fs::read_to_string(&input).unwrap_or_else(|e| panic!("{input}: {e}"));
    let params = SearchParams::default();
    let (mut train, mut test) = (Vec::<Sample>::new(), Vec::<Sample>::new());
    let (mut previous, mut games) = (String::new(), 0usize);
    let (mut forced, mut tactical, mut outside) = (0, 0, 0);
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let bad = || panic!("{input}:{}: expected `rule | moves | move`", n + 1);
        let [code, moves, chosen] = fields[..] else {
            bad()
        };
        let rule = code
            .parse()
            .ok()
            .and_then(Rule::from_gomocup)
            .unwrap_or_else(|| bad());
        // A game's positions follow each other, each extending the one before.
        let more = moves.strip_prefix(previous.as_str());
        if previous.is_empty() || !more.is_some_and(|m| m.starts_with(' ')) {
            games += 1;
        }
        previous = moves.to_string();
        let mut board = Board::new(Rules::caro(15, 15, rule).expect("15x15"));
        for m in moves.split_whitespace() {
            let mv = parse_square(m).unwrap_or_else(|| bad());
            board
                .try_play(mv)
                .unwrap_or_else(|e| panic!("{input}:{}: {e}", n + 1));
        }
        let pos = Position::new(&board);
        let chosen = pos.index(parse_square(chosen).unwrap_or_else(|| bad()));
        match policy::sample(&pos, chosen, &params) {
            Ok(s) if games % 5 == 0 => test.push(s),
            Ok(s) => train.push(s),
            Err(Skip::Forced) => forced += 1,
            Err(Skip::Tactical) => tactical += 1,
            Err(Skip::Outside) => outside += 1,
        }
    }
    println!(
        "{games} games: {} positions to fit, {} held out; left out {forced} forced, {tactical} \
         tactical choices, {outside} outside the candidates ({:.1} s)",
        train.len(),
        test.len(),
        start.elapsed().as_secs_f64()
    );
    let temperature = policy::fit_temperature(&train);
    println!("cell values' temperature {temperature:.2}");
    show(
        "cell values, held out",
        &policy::ranking(&test, |c| f64::from(c.value), temperature),
    );
    let model = policy::fit(
        &train,
        &Fit {
            epochs,
            ..Fit::default()
        },
        |epoch, model, loss| {
            println!(
                "pass {}: training loss {loss:.4} ({:.0} s)",
                epoch + 1,
                start.elapsed().as_secs_f64()
            );
            show(
                "learnt, held out",
                &policy::ranking(&test, |c| model.score(c), 1.0),
            );
        },
    );
    let (mut values, mut learnt, mut count) = (0.0, 0.0, 0.0);
    for s in &train {
        for c in &s.candidates {
            values += f64::from(c.value);
            learnt += model.score(c) * temperature;
            count += 1.0;
        }
    }
    let offset = (values - learnt) / count;
    let p = model.to_policy(temperature, offset);
    let header = format!(
        "# The learnt ordering of quiet moves (docs/engine.md, \"A move ordering learnt from \
         Rapfi's moves\"),\n# written by `cargo run --release -p caro-engine --example policy -- \
         MOVES OUT {epochs}` from\n# {} positions of {games} games ({} held out); ordering units: \
         logits times {temperature:.2}, offset {offset:.1}.\n",
        train.len() + test.len(),
        test.len()
    );
    std::fs::write(&out, header + &p.to_text()).unwrap_or_else(|e| panic!("{out}: {e}"));
    println!("wrote {out}");
}
