//! Runs a Gomocup (`pbrain`) engine over `.pos` test positions through the protocol and reports,
//! per file and label, how many it answered correctly, as a markdown table.
//!
//! ```text
//! cargo build --release -p caro-pbrain --bin pbrain-caro
//! cargo run --release -p caro-engine --example solve_positions -- \
//!     target/release/pbrain-caro [ms_per_move] [-v] [file.pos ...]
//! ```
//! Defaults: 100 ms per move, every file in `crates/engine/tests/data/positions/`. `-v` prints
//! each wrong answer. Any protocol-2 engine works, not only ours; the engine argument is split on
//! spaces into a program and its arguments, so `"target/release/pbrain-caro classic 4"` measures
//! the seed baseline.
//!
//! Per position the engine gets `INFO timeout_turn`, `INFO timeout_match 0`, `INFO rule`,
//! `START 15` and the stones in a `BOARD` block (the side to move's stones as field 1). Scoring
//! follows `tests/data/positions/README.md`:
//! - `WIN1`, `BLOCK4`, `DEFEND`: correct when the answer is one of the listed squares;
//! - `MATE`: correct when it equals the listed move; other moves may also win, so the table also
//!   counts answers whose last `MESSAGE` claims a forced win (a `+M` score, as `pbrain-caro`
//!   prints it), and "keeps win", the answers that are the listed move or claim a forced win
//!   (the issue's measure: a move that keeps the forced win; a claim is a proof found by the
//!   engine's search, not checked here);
//! - `LOST`: any legal answer is fine (the position only checks the engine survives);
//! - `QUIET` positions (speed measurements, nothing to check) are skipped.
//!
//! An illegal answer, an `ERROR` or no answer within the turn time plus a grace period counts
//! against the engine; a silent engine is restarted.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use caro_engine::positions::{parse, square_name, Label, TestPosition};
use caro_engine::{Move, Player};

/// Extra time past `timeout_turn` before an answer counts as missing.
const GRACE: Duration = Duration::from_secs(2);

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(engine) = args.next() else {
        eprintln!("usage: solve_positions <pbrain engine> [ms_per_move] [-v] [file.pos ...]");
        std::process::exit(2);
    };
    let (mut ms, mut verbose, mut files) = (100u64, false, Vec::new());
    for arg in args {
        if arg == "-v" {
            verbose = true;
        } else if let Ok(n) = arg.parse() {
            ms = n;
        } else {
            files.push(PathBuf::from(arg));
        }
    }
    if files.is_empty() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/positions");
        files = std::fs::read_dir(dir)
            .expect("the positions folder")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pos"))
            .collect();
        files.sort();
    }

    let mut engine_proc = Engine::spawn(&engine);
    // (file, label) -> tally
    let mut table: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let start = Instant::now();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let positions = parse(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let name = file_name(file);
        for p in positions.into_iter().filter(|p| p.label != Label::Quiet) {
            let outcome = engine_proc.solve(&p, ms).unwrap_or_else(|why| {
                // A silent or dead engine: start a new one for the next position.
                engine_proc = Engine::spawn(&engine);
                Outcome::Failed(why)
            });
            let tally = table
                .entry((name.clone(), format!("{:?}", p.label).to_uppercase()))
                .or_default();
            tally.add(&p, &outcome);
            let keeps = matches!(
                outcome,
                Outcome::Move {
                    claims_win: true,
                    ..
                }
            );
            if verbose && !tally.was_correct(&p, &outcome) && !(p.label == Label::Mate && keeps) {
                let answer = match &outcome {
                    Outcome::Move { mv, .. } => square_name(*mv),
                    Outcome::Failed(why) => why.clone(),
                };
                println!(
                    "{} ({}): answered {answer}, expected {}",
                    p.id,
                    p.note,
                    p.expected
                        .iter()
                        .map(|&m| square_name(m))
                        .collect::<Vec<_>>()
                        .join("/")
                );
            }
        }
    }
    engine_proc.quit();

    println!("\n{engine} at {ms} ms per move\n");
    println!(
        "| file | label | positions | correct | % | claims win | keeps win | illegal/error/timeout |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut all = Tally::default();
    for ((file, label), t) in &table {
        let mate = |n: u32| {
            if label == "MATE" {
                format!("{n} ({:.1}%)", 100.0 * n as f64 / t.total.max(1) as f64)
            } else {
                "-".to_string()
            }
        };
        println!(
            "| {file} | {label} | {} | {} | {:.0}% | {} | {} | {} |",
            t.total,
            t.correct,
            100.0 * t.correct as f64 / t.total.max(1) as f64,
            mate(t.claims_win),
            mate(t.keeps_win),
            t.failed
        );
        all.total += t.total;
        all.correct += t.correct;
        if label == "MATE" {
            all.claims_win += t.claims_win;
            all.keeps_win += t.keeps_win;
        }
        all.failed += t.failed;
    }
    println!(
        "| **all** | | {} | {} | {:.0}% | {} | {} | {} |",
        all.total,
        all.correct,
        100.0 * all.correct as f64 / all.total.max(1) as f64,
        all.claims_win,
        all.keeps_win,
        all.failed
    );
    eprintln!("({:.1} s)", start.elapsed().as_secs_f64());
}

/// What the engine did with one position.
#[derive(Debug)]
enum Outcome {
    /// A legal answer, and whether its last report claimed a forced win.
    Move { mv: Move, claims_win: bool },
    /// An illegal answer, `ERROR`, or no answer; why.
    Failed(String),
}

#[derive(Default)]
struct Tally {
    total: u32,
    correct: u32,
    claims_win: u32,
    /// MATE answers that are the listed move or claim a forced win.
    keeps_win: u32,
    failed: u32,
}

impl Tally {
    fn was_correct(&self, p: &TestPosition, outcome: &Outcome) -> bool {
        match outcome {
            Outcome::Failed(_) => false,
            Outcome::Move { mv, .. } => match p.label {
                Label::Lost | Label::Quiet => true,
                Label::Mate => p.expected.first() == Some(mv),
                Label::Win1 | Label::Block4 | Label::Defend => p.expected.contains(mv),
            },
        }
    }

    fn add(&mut self, p: &TestPosition, outcome: &Outcome) {
        self.total += 1;
        if self.was_correct(p, outcome) {
            self.correct += 1;
        }
        match outcome {
            Outcome::Failed(_) => self.failed += 1,
            Outcome::Move { mv, claims_win } => {
                self.claims_win += *claims_win as u32;
                let listed = p.expected.first() == Some(mv);
                self.keeps_win += (p.label == Label::Mate && (listed || *claims_win)) as u32;
            }
        }
    }
}

/// A running engine and its output lines.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    /// Starts `command`: a program path, then its arguments, separated by spaces.
    fn spawn(command: &str) -> Engine {
        let mut words = command.split_whitespace();
        let path = words.next().expect("an engine command");
        let mut child = Command::new(path)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {path}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        write!(self.stdin, "{line}\r\n")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("engine gone: {e}"))
    }

    /// The next answer line, with the `MESSAGE`/`DEBUG` lines before it.
    fn reply(&mut self, within: Duration) -> Result<(String, Vec<String>), String> {
        let deadline = Instant::now() + within;
        let mut messages = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .map_err(|_| format!("no answer within {within:?}"))?;
            let line = line.trim().to_string();
            if line.starts_with("MESSAGE") || line.starts_with("DEBUG") {
                messages.push(line);
            } else if !line.is_empty() {
                return Ok((line, messages));
            }
        }
    }

    fn solve(&mut self, p: &TestPosition, ms: u64) -> Result<Outcome, String> {
        let turn = Duration::from_millis(ms) + GRACE;
        self.send(&format!("INFO timeout_turn {ms}"))?;
        self.send("INFO timeout_match 0")?;
        self.send(&format!("INFO rule {}", p.rule.gomocup_code()))?;
        self.send("START 15")?;
        let (ok, _) = self.reply(turn)?;
        if ok != "OK" {
            return Ok(Outcome::Failed(format!("START 15: {ok}")));
        }
        let (own, theirs) = match p.to_move {
            Player::X => (&p.black, &p.white),
            Player::O => (&p.white, &p.black),
        };
        self.send("BOARD")?;
        for (stones, field) in [(own, 1), (theirs, 2)] {
            for m in stones {
                self.send(&format!("{},{},{field}", m.x, m.y))?;
            }
        }
        self.send("DONE")?;
        let (answer, messages) = self.reply(turn)?;
        let Some(mv) = parse_move(&answer) else {
            return Ok(Outcome::Failed(answer));
        };
        if mv.x >= 15 || mv.y >= 15 || p.black.contains(&mv) || p.white.contains(&mv) {
            return Ok(Outcome::Failed(format!("illegal {answer}")));
        }
        let claims_win = messages.last().is_some_and(|m| m.contains("+M"));
        Ok(Outcome::Move { mv, claims_win })
    }

    fn quit(mut self) {
        let _ = self.send("END");
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Replaced or finished engines must not linger.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_move(s: &str) -> Option<Move> {
    let (x, y) = s.split_once(',')?;
    Some(Move::new(x.trim().parse().ok()?, y.trim().parse().ok()?))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}
