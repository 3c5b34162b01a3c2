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
//! ```
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
        _ => {
            eprintln!(
                "usage: fake-pbrain good|illegal|crash|crash-once FILE|slow MS|garbage|error"
            );
            std::process::exit(2);
        }
    };
    let stdin = io::stdin();
    let mut out = io::stdout();
    let mut lines = stdin.lock().lines();
    let (mut w, mut h) = (15usize, 15usize);
    let mut taken: Vec<bool> = vec![false; w * h];
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
                taken = vec![false; w * h];
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
                    if let Some((x, y)) = cell(&l) {
                        taken[y * w + x] = true;
                    }
                }
                my_moves += 1;
                answer(&mode, my_moves, &mut taken, w, h, &mut say);
            }
            "BEGIN" | "TURN" => {
                if let Some((x, y)) = cell(args) {
                    taken[y * w + x] = true;
                }
                my_moves += 1;
                answer(&mode, my_moves, &mut taken, w, h, &mut say);
            }
            _ => say(&format!("UNKNOWN {cmd}")),
        }
    }
}

fn answer(mode: &Mode, n: u32, taken: &mut [bool], w: usize, h: usize, say: &mut impl FnMut(&str)) {
    say("MESSAGE thinking hard");
    say("DEBUG fake");
    if n == 3 {
        match mode {
            Mode::Good => {}
            Mode::Illegal => {
                let (i, _) = taken.iter().enumerate().find(|(_, &t)| t).expect("a stone");
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
        .filter(|&i| !taken[i])
        .min_by_key(|&i| {
            let (dx, dy) = ((i % w) as i64 - cx, (i / w) as i64 - cy);
            (dx * dx + dy * dy, i)
        })
        .expect("an empty cell");
    taken[best] = true;
    say(&format!("{},{}", best % w, best / w));
}
