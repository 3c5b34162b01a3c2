//! `fake-pbrain`: a TEST FIXTURE, not an engine. A scripted Gomocup brain for the integration
//! tests of `caro-match`: it plays the empty cell nearest the centre (ties broken row by row),
//! and misbehaves on demand to check that the referee forfeits the culprit and the match goes on.
//!
//! ```text
//! fake-pbrain good            plays legally, with MESSAGE/DEBUG chatter before each move
//! fake-pbrain illegal         its 3rd move is on a taken cell
//! fake-pbrain crash           exits (no answer) when asked for its 3rd move
//! fake-pbrain crash-once FILE like crash, but only in the first game of its first process:
//!                             the FILE marks that it crashed, so a respawned process plays well
//! fake-pbrain slow MS         sleeps MS milliseconds before its 3rd move
//! fake-pbrain garbage         answers its 3rd move request with words
//! fake-pbrain error           answers its 3rd move request with `ERROR ...`
//! fake-pbrain eval            plays legally, reporting evaluations before each move (below)
//! ```
//!
//! In `eval` mode, for the judge's tests (`caro-match judge`), each move comes after the
//! `MESSAGE` lines `depth 1 | Eval 9999 | ...` and `depth 2 | Eval N | ...`, then a `DEBUG` line
//! with `Eval 5555`. N, for the side to move, is the sum of the columns of its own stones minus
//! the sum of the columns of the opponent's (column `a` is 0): so, for X, the sum of X's columns
//! minus the sum of O's whichever side is to move. A judge that reads the last `MESSAGE`
//! evaluation and turns it into one for X finds that; one that read the first, or a `DEBUG`
//! line, or forgot the side to move, does not.
//!
//! Moves are counted per game (START resets the count). Standard library only.

use std::io::{self, BufRead, Write};
use std::thread;
use std::time::Duration;

#[derive(Clone, PartialEq)]
enum Mode {
    Good,
    Illegal,
    Crash,
    CrashOnce(String),
    Slow(u64),
    Garbage,
    Error,
    Eval,
}

/// A cell, seen from the brain.
#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Empty,
    Own,
    Opponent,
    /// `BOARD` field 3: a winning line of an earlier game, not to be played on.
    Blocked,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match (args.first().map(String::as_str), args.get(1)) {
        (Some("good") | None, _) => Mode::Good,
        (Some("illegal"), _) => Mode::Illegal,
        (Some("crash"), _) => Mode::Crash,
        (Some("crash-once"), Some(f)) => Mode::CrashOnce(f.clone()),
        (Some("slow"), Some(ms)) => Mode::Slow(ms.parse().expect("slow MS")),
        (Some("garbage"), _) => Mode::Garbage,
        (Some("error"), _) => Mode::Error,
        (Some("eval"), _) => Mode::Eval,
        _ => {
            eprintln!(
                "usage: fake-pbrain good|illegal|crash|crash-once FILE|slow MS|garbage|error|eval"
            );
            std::process::exit(2);
        }
    };
    let stdin = io::stdin();
    let mut out = io::stdout();
    let mut lines = stdin.lock().lines();
    let (mut w, mut h) = (15usize, 15usize);
    let mut cells = vec![Cell::Empty; w * h];
    let mut my_moves = 0;
    let mut say = |s: &str| {
        writeln!(out, "{s}").unwrap();
        out.flush().unwrap();
    };
    while let Some(Ok(line)) = lines.next() {
        let line = line.trim().to_string();
        let (cmd, args) = line.split_once(' ').unwrap_or((&line, ""));
        let cell = |s: &str| -> Option<(usize, usize)> {
            let mut it = s.split(',').map(|n| n.trim().parse::<usize>().ok());
            Some((it.next()??, it.next()??))
        };
        match cmd.to_ascii_uppercase().as_str() {
            "START" | "RECTSTART" => {
                if cmd.eq_ignore_ascii_case("START") {
                    w = args.trim().parse().unwrap_or(15);
                    h = w;
                } else if let Some((a, b)) = cell(args) {
                    (w, h) = (a, b);
                }
                cells = vec![Cell::Empty; w * h];
                my_moves = 0;
                say("OK");
            }
            "INFO" | "END" => {
                if cmd.eq_ignore_ascii_case("END") {
                    return;
                }
            }
            "ABOUT" => say("name=\"fake-pbrain\", version=\"1\""),
            "BOARD" => {
                for l in lines.by_ref() {
                    let l = l.unwrap();
                    if l.trim().eq_ignore_ascii_case("DONE") {
                        break;
                    }
                    let fields: Vec<usize> =
                        l.split(',').filter_map(|n| n.trim().parse().ok()).collect();
                    if let [x, y, field] = fields[..] {
                        cells[y * w + x] = match field {
                            1 => Cell::Own,
                            2 => Cell::Opponent,
                            _ => Cell::Blocked,
                        };
                    }
                }
                my_moves += 1;
                answer(&mode, my_moves, &mut cells, w, h, &mut say);
            }
            "BEGIN" | "TURN" => {
                if let Some((x, y)) = cell(args) {
                    cells[y * w + x] = Cell::Opponent;
                }
                my_moves += 1;
                answer(&mode, my_moves, &mut cells, w, h, &mut say);
            }
            _ => say(&format!("UNKNOWN {cmd}")),
        }
    }
}

fn answer(mode: &Mode, n: u32, cells: &mut [Cell], w: usize, h: usize, say: &mut impl FnMut(&str)) {
    say("MESSAGE thinking hard");
    say("DEBUG fake");
    if *mode == Mode::Eval {
        let eval: i64 = (0..w * h)
            .map(|i| match cells[i] {
                Cell::Own => (i % w) as i64,
                Cell::Opponent => -((i % w) as i64),
                _ => 0,
            })
            .sum();
        say("MESSAGE depth 1 | Eval 9999 | a shallow result the deeper one replaces");
        say(&format!("MESSAGE depth 2 | Eval {eval} | nodes 2"));
        say("DEBUG Eval 5555 (not a MESSAGE line)");
    }
    if n == 3 {
        match mode {
            Mode::Good | Mode::Eval => {}
            Mode::Illegal => {
                let i = cells
                    .iter()
                    .position(|&c| c != Cell::Empty)
                    .expect("a stone");
                say(&format!("{},{}", i % w, i / w));
                return;
            }
            Mode::Crash => std::process::exit(3),
            Mode::CrashOnce(file) => {
                if std::fs::metadata(file).is_err() {
                    std::fs::write(file, "crashed\n").unwrap();
                    std::process::exit(3);
                }
            }
            Mode::Slow(ms) => thread::sleep(Duration::from_millis(*ms)),
            Mode::Garbage => {
                say("hello, I am not a move");
                return;
            }
            Mode::Error => {
                say("ERROR I give up");
                return;
            }
        }
    }
    let (cx, cy) = ((w / 2) as i64, (h / 2) as i64);
    let best = (0..w * h)
        .filter(|&i| cells[i] == Cell::Empty)
        .min_by_key(|&i| {
            let (dx, dy) = ((i % w) as i64 - cx, (i / w) as i64 - cy);
            (dx * dx + dy * dy, i)
        })
        .expect("an empty cell");
    cells[best] = Cell::Own;
    say(&format!("{},{}", best % w, best / w));
}
