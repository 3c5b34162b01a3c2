//! `pbrain-caro` over real pipes: spawn the built binary, send Gomocup protocol lines and assert
//! the exact replies, as Piskvork or c-gomoku-cli would see them. Every read has a timeout, so a
//! hung engine fails the test instead of hanging CI.
//!
//! Most assertions hold for any engine that answers legally. The ones that need a real search
//! (finding the winning square) are in `strength_*` tests, so that a failure there points at the
//! search, not at the protocol.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use caro_engine::search::params::SearchParams;

/// How long any single reply may take. The engine is told `timeout_turn` of at most 1 s.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `pbrain-caro` with its pipes.
struct Brain {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every `MESSAGE` / `DEBUG` line seen, for the tests that read search reports.
    messages: Vec<String>,
}

impl Brain {
    fn spawn() -> Brain {
        Brain::spawn_with(&[])
    }

    /// `pbrain-caro` with command-line arguments (`classic 2`, `--depth 3 --blunder 0.5`).
    fn spawn_with(args: &[&str]) -> Brain {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pbrain-caro starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        // A reader thread, so the test can wait for a line with a timeout.
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Brain {
            child,
            stdin,
            lines,
            messages: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        // The manager ends its lines with CR LF (protocol 2); so do we, to test that path.
        let stdin = self.stdin.as_mut().expect("stdin is open");
        write!(stdin, "{line}\r\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line that is not a `MESSAGE` or `DEBUG` report.
    fn reply(&mut self) -> String {
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no reply within {REPLY_TIMEOUT:?}: {e}"));
            let line = line.trim_end().to_string();
            if line.starts_with("MESSAGE") || line.starts_with("DEBUG") {
                self.messages.push(line);
            } else {
                return line;
            }
        }
    }

    /// Sends `command` and asserts the exact reply.
    fn expect(&mut self, command: &str, reply: &str) {
        self.send(command);
        assert_eq!(self.reply(), reply, "reply to {command:?}");
    }

    /// Sends `command` and asserts the reply starts with `prefix`.
    fn expect_prefix(&mut self, command: &str, prefix: &str) -> String {
        self.send(command);
        let reply = self.reply();
        assert!(
            reply.starts_with(prefix),
            "reply to {command:?}: {reply:?}, expected {prefix}..."
        );
        reply
    }

    /// Sends `command` and returns the move it answers.
    fn expect_move(&mut self, command: &str) -> (u8, u8) {
        self.send(command);
        let reply = self.reply();
        parse_move(&reply).unwrap_or_else(|| panic!("reply to {command:?}: {reply:?}, not x,y"))
    }

    /// Sends a whole `BOARD` ... `DONE` block and returns the move it answers.
    fn board(&mut self, stones: &[(u8, u8, u8)]) -> String {
        self.send("BOARD");
        for (x, y, field) in stones {
            self.send(&format!("{x},{y},{field}"));
        }
        self.send("DONE");
        self.reply()
    }

    /// Sends `END` and asserts the process exits 0 promptly.
    fn end(mut self) {
        self.send("END");
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("pbrain-caro did not exit after END");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        // A failed test must not leave the engine running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_move(s: &str) -> Option<(u8, u8)> {
    let (x, y) = s.split_once(',')?;
    Some((x.parse().ok()?, y.parse().ok()?))
}

/// A new 15x15 game with short turns, under `rule`.
fn started(rule: u32) -> Brain {
    let mut brain = Brain::spawn();
    brain.send("INFO timeout_match 0");
    brain.send("INFO timeout_turn 300");
    brain.send("INFO max_memory 83886080");
    brain.send(&format!("INFO rule {rule}"));
    brain.expect("START 15", "OK");
    brain
}

/// X (us, field 1) has four on row 7 with both ends open; O (field 2) has four on row 9.
/// Their four on row 7 closed at 3,7 by us: 8,7 is the only defence.
const CLOSED_FOUR: [(u8, u8, u8); 7] = [
    (4, 7, 2),
    (5, 7, 2),
    (6, 7, 2),
    (7, 7, 2),
    (3, 7, 1),
    (0, 14, 1),
    (14, 0, 1),
];

const WIN_NOW: [(u8, u8, u8); 8] = [
    (4, 7, 1),
    (5, 7, 1),
    (6, 7, 1),
    (7, 7, 1),
    (4, 9, 2),
    (5, 9, 2),
    (6, 9, 2),
    (7, 9, 2),
];

#[test]
fn a_scripted_session() {
    let mut brain = Brain::spawn();
    brain.expect_prefix("ABOUT", "name=\"pbrain-caro\", version=\"");

    // Sizes: caro boards from 5 to 32.
    brain.expect_prefix("START 4", "ERROR");
    brain.expect_prefix("START 40", "ERROR");
    brain.expect_prefix("START abc", "ERROR");
    brain.expect_prefix("BEGIN", "ERROR"); // no game after a refused START
    brain.expect("RECTSTART 20,15", "OK");
    brain.expect("START 15", "OK");

    // INFO has no answer when accepted: the next command's reply comes straight after.
    for info in [
        "INFO timeout_turn 300",
        "INFO timeout_match 100000",
        "INFO time_left 100000",
        "INFO max_memory 83886080",
        "INFO game_type 1",
        "INFO folder /tmp",
        "INFO evaluate 7,7",
        "INFO some_future_key 42",
        "INFO time_left -20",
        "INFO time_left 2147483647",
        "INFO rule 9",
    ] {
        brain.send(info);
    }
    // A rule we cannot play: INFO is never answered (the manager does not read replies to it);
    // the error comes at the next game command, and stays until a rule we can play arrives.
    brain.send("INFO rule 4"); // renju
    brain.expect_prefix("START 15", "ERROR unsupported rule 4");
    brain.expect_prefix("BEGIN", "ERROR unsupported rule 4");
    brain.send("INFO rule 5"); // renju with exact five
    let reply = brain.board(&[(7, 7, 2)]);
    assert!(reply.starts_with("ERROR unsupported rule 5"), "{reply}");
    brain.expect_prefix("ABOUT", "name="); // not a game command
    brain.send("INFO rule x");
    brain.expect_prefix("TURN 1,1", "ERROR unsupported rule x");
    brain.send("INFO rule 1");
    brain.send("INFO rule 9");
    brain.expect("START 15", "OK");

    // We open, they answer, we answer.
    let first = brain.expect_move("BEGIN");
    assert!(first.0 < 15 && first.1 < 15, "{first:?}");
    let theirs = if first == (7, 7) { (8, 8) } else { (7, 7) };
    let second = brain.expect_move(&format!("TURN {},{}", theirs.0, theirs.1));
    assert!(second != first && second != theirs, "{second:?} is taken");

    // Illegal and garbage input: an error line, and the engine stays alive.
    brain.expect_prefix(&format!("TURN {},{}", first.0, first.1), "ERROR");
    brain.expect_prefix("TURN 15,3", "ERROR");
    brain.expect_prefix("TURN 99999999999999999999,1", "ERROR");
    brain.expect_prefix("TURN", "ERROR");
    brain.expect_prefix("TURN seven,eight", "ERROR");
    brain.expect_prefix("HELLO", "UNKNOWN");
    brain.expect_prefix("\u{1b}[A garbage \u{0}", "UNKNOWN");
    brain.send_bytes(b"\xff\xfe TURN 1,1\r\n");
    assert!(brain.reply().starts_with("UNKNOWN"), "not UTF-8");
    brain.send_bytes(b"TURN 1,\xff\r\n");
    assert!(brain.reply().starts_with("ERROR"), "not UTF-8");

    // TAKEBACK our last move, then the opponent's; a cell without a stone is an error.
    brain.expect(&format!("TAKEBACK {},{}", second.0, second.1), "OK");
    brain.expect(&format!("TAKEBACK {},{}", theirs.0, theirs.1), "OK");
    brain.expect_prefix(&format!("TAKEBACK {},{}", theirs.0, theirs.1), "ERROR");
    // The cell is free again.
    let again = brain.expect_move(&format!("TURN {},{}", theirs.0, theirs.1));
    assert!(again != first && again != theirs);

    // PLAY (Yixin extension): our move, dictated.
    brain.expect("PLAY 0,14", "0,14");
    brain.expect_prefix("PLAY 0,14", "ERROR");

    // RESTART clears the board: the cells are free again.
    brain.expect("RESTART", "OK");
    brain.expect("PLAY 0,14", "0,14");
    brain.expect("RESTART", "OK");

    // BOARD: a position, then our move, which must be legal.
    let reply = brain.board(&WIN_NOW);
    let mv = parse_move(&reply).unwrap_or_else(|| panic!("BOARD reply {reply:?}"));
    assert!(!WIN_NOW.iter().any(|&(x, y, _)| (x, y) == mv), "{mv:?}");

    // BOARD holding a five already (it happens in continuous games): we answer a legal move
    // without searching, the free cell nearest the centre.
    brain.expect("RESTART", "OK");
    let won: Vec<(u8, u8, u8)> = (3..8)
        .map(|x| (x, 7, 2))
        .chain([(0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 1), (14, 14, 1)])
        .collect();
    assert_eq!(brain.board(&won), "7,6");
    assert!(
        brain.messages.last().unwrap().contains("already won"),
        "{:?}",
        brain.messages
    );
    // Nothing can be played on a won board.
    brain.expect_prefix("TURN 10,10", "ERROR");

    // BOARD errors: impossible counts, bad lines; the engine still reads up to DONE.
    brain.expect("RESTART", "OK");
    let reply = brain.board(&[(1, 1, 1), (2, 2, 1)]);
    assert!(reply.starts_with("ERROR"), "{reply}");
    brain.send("BOARD");
    brain.send("1,1,1");
    brain.send("what is this");
    brain.send("DONE");
    assert!(brain.reply().starts_with("ERROR"));
    // Field 3 (a winning-line mark) is not a stone, but we do not answer on it.
    brain.expect("RESTART", "OK");
    let reply = brain.board(&[(7, 7, 3)]);
    assert!(parse_move(&reply).is_some_and(|m| m != (7, 7)), "{reply}");

    brain.end();
}

#[test]
fn search_reports_are_messages() {
    let mut brain = started(0);
    brain.expect_move("BEGIN");
    let report = brain
        .messages
        .first()
        .expect("a MESSAGE line per iteration");
    for key in ["depth ", "score ", "nodes ", "nps ", "pv "] {
        assert!(report.contains(key), "{report:?} lacks {key:?}");
    }
    brain.end();
}

/// The turn time is honoured by the engine's own clock: every search report of a turn (the
/// `time` of each `MESSAGE`) stays within `timeout_turn`, and each answer is a legal move. The
/// wall-clock time of a reply is not asserted: on a loaded machine the pipes and the scheduler
/// add to it whatever the engine does, and the guard in `reply` bounds it.
#[test]
fn answers_within_the_turn_time() {
    let mut brain = started(9);
    brain.send("INFO timeout_turn 1000");
    let mut moves = 0;
    let mut reports = 0;
    let mut taken = std::collections::HashSet::new();
    for (x, y) in [(7, 7), (6, 8), (9, 5), (3, 3), (11, 4)] {
        let seen = brain.messages.len();
        brain.send(&format!("TURN {x},{y}"));
        let reply = brain.reply();
        // Our own moves may have taken one of these cells; then ERROR is the right answer.
        if taken.insert((x, y)) {
            let mv = parse_move(&reply).unwrap_or_else(|| panic!("{reply}"));
            assert!(mv.0 < 15 && mv.1 < 15, "{reply}");
            assert!(taken.insert(mv), "{reply} plays a taken cell");
            moves += 1;
        } else {
            assert!(reply.starts_with("ERROR"), "{reply}");
        }
        for report in &brain.messages[seen..] {
            let ms: u64 = report
                .split_whitespace()
                .skip_while(|w| *w != "time")
                .nth(1)
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("no time in {report:?}"));
            assert!(ms <= 1000, "searched {ms} ms on a 1000 ms turn: {report:?}");
            reports += 1;
        }
    }
    assert!(moves >= 3, "only {moves} moves");
    assert!(reports > 0, "no search reports to check");
    brain.end();
}

#[test]
fn end_of_input_ends_the_process() {
    let mut brain = started(0);
    drop(brain.stdin.take());
    let deadline = Instant::now() + REPLY_TIMEOUT;
    while brain.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "still running after stdin closed"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// The protocol path with a search that works today: the classic baseline (`pbrain-caro
/// classic 2`) makes the five and blocks a four after BOARD.
#[test]
fn classic_mode_wins_and_blocks() {
    let mut brain = Brain::spawn_with(&["classic", "2"]);
    brain.send("INFO timeout_turn 2000");
    brain.expect("START 15", "OK");
    let reply = brain.board(&WIN_NOW);
    assert!(reply == "3,7" || reply == "8,7", "{reply}");
    brain.expect("RESTART", "OK");
    // Their four on row 7 is closed at 3,7 by us: 8,7 is the only defence.
    let reply = brain.board(&CLOSED_FOUR);
    assert_eq!(reply, "8,7");
    // Play goes on from there: a TURN gets a legal move.
    let mv = brain.expect_move("TURN 9,9");
    assert!(mv != (9, 9) && mv != (8, 7), "{mv:?}");
    brain.end();
}

/// The same two positions through `--style classic --depth 2`, the flag form of `classic 2`.
#[test]
fn classic_style_flag_is_the_classic_mode() {
    let mut brain = Brain::spawn_with(&["--style", "classic", "--depth", "2"]);
    brain.send("INFO timeout_turn 2000");
    brain.expect("START 15", "OK");
    let reply = brain.board(&WIN_NOW);
    assert!(reply == "3,7" || reply == "8,7", "{reply}");
    brain.end();
}

/// A bot level on the command line: `--depth` bounds every reported iteration, and a bot that
/// blunders on every move (`--blunder 1`) still takes a five and still blocks one, as a server
/// bot does.
#[test]
fn level_flags_limit_the_depth_and_blunder_safely() {
    let mut brain = Brain::spawn_with(&["--depth", "3", "--blunder", "1", "--seed", "7"]);
    brain.send("INFO timeout_turn 5000");
    brain.send("INFO rule 0");
    brain.expect("START 15", "OK");
    let reply = brain.board(&WIN_NOW);
    assert!(reply == "3,7" || reply == "8,7", "{reply}");
    brain.expect("RESTART", "OK");
    let reply = brain.board(&CLOSED_FOUR);
    assert_eq!(reply, "8,7");
    brain.expect("RESTART", "OK");
    brain.expect_move("BEGIN");
    brain.expect_move("TURN 8,8");
    brain.expect_move("TURN 9,9");
    let depths: Vec<u32> = brain
        .messages
        .iter()
        .filter_map(|m| m.split_whitespace().skip_while(|&w| w != "depth").nth(1))
        .map(|d| d.parse().unwrap())
        .collect();
    assert!(!depths.is_empty(), "{:?}", brain.messages);
    assert!(depths.iter().all(|&d| d <= 3), "{depths:?}");
    brain.end();
}

/// Blunders are seeded: the same flags and the same session give the same moves, and with
/// `--blunder 1` the move differs from the unblundering bot's every time.
#[test]
fn blunders_follow_the_seed() {
    let session = |args: &[&str]| {
        let mut brain = Brain::spawn_with(args);
        brain.send("INFO timeout_turn 5000");
        brain.send("INFO rule 9");
        brain.expect("START 15", "OK");
        // A quiet position with many reasonable moves.
        let reply = brain.board(&[(7, 7, 2), (8, 8, 1), (6, 8, 2)]);
        let first = parse_move(&reply).unwrap_or_else(|| panic!("{reply}"));
        brain.expect("RESTART", "OK");
        let reply = brain.board(&[(7, 7, 2), (8, 6, 1), (9, 7, 2)]);
        let second = parse_move(&reply).unwrap_or_else(|| panic!("{reply}"));
        brain.end();
        [first, second]
    };
    let best = session(&["--depth", "2"]);
    let a = session(&["--depth", "2", "--blunder", "1", "--seed", "11"]);
    let b = session(&["--depth", "2", "--blunder", "1", "--seed", "11"]);
    assert_eq!(a, b, "same seed, same moves");
    assert!(a[0] != best[0] && a[1] != best[1], "{a:?} vs {best:?}");
}

/// A malformed level is a usage error (exit status 2), not a brain that plays something else.
#[test]
fn bad_level_flags_are_refused() {
    for args in [
        &["--depth", "0"][..],
        &["--blunder", "2"],
        &["--style", "turbo"],
        &["--time-ms"],
        &["--nodes", "0"],
        &["--hash", "5"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: nothing on the protocol channel"
        );
    }
}

/// The nodes and the move of a depth-7 search of a fixed middle-game position, with `args`.
fn depth_seven(args: &[&str]) -> (u64, String) {
    let mut all = vec!["--depth", "7"];
    all.extend_from_slice(args);
    let mut brain = Brain::spawn_with(&all);
    brain.send("INFO timeout_turn 30000");
    brain.send("INFO rule 0");
    brain.expect("START 15", "OK");
    let reply = brain.board(&[(7, 7, 2), (8, 8, 1), (6, 8, 2), (8, 6, 1), (7, 9, 2)]);
    let last = brain.messages.last().cloned().expect("search reports");
    brain.end();
    let nodes = last
        .split_whitespace()
        .skip_while(|&w| w != "nodes")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{last}"));
    (nodes, reply)
}

/// A scratch file for one test, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("pbrain-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        Scratch(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `--weights` evaluates with a file's weights and `--search` sets the search's numbers: the
/// built-in weights' own file searches exactly as without the flag, other weights or numbers
/// search another tree.
#[test]
fn weights_and_search_numbers_come_from_the_command_line() {
    let built = include_str!("../../engine/src/search/weights.txt");
    let plain = depth_seven(&[]);
    let same = Scratch::new("same.txt", built);
    assert_eq!(depth_seven(&["--weights", same.path()]), plain);
    // The default given by flag, read from the engine so that a retune need not edit this.
    let defaults = format!(
        "--search=lmp_quarters={}",
        SearchParams::default().lmp_quarters
    );
    assert_eq!(depth_seven(&[&defaults]), plain);
    let zero_plus: String = built
        .lines()
        .map(|l| {
            if l.starts_with("plus ") {
                "plus 0 0 0 0"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(zero_plus, built.trim_end());
    let other = Scratch::new("other.txt", &zero_plus);
    let (nodes, _) = depth_seven(&["--weights", other.path()]);
    assert_ne!(nodes, plain.0);
    let (nodes, _) = depth_seven(&["--search", "lmp_quarters=12", "--search", "lmr_k=0.3"]);
    assert_ne!(nodes, plain.0);
}

/// A weights file that cannot be read or parsed, or an unknown or malformed search number, is
/// a usage error naming what is wrong.
#[test]
fn bad_weights_and_search_numbers_are_refused() {
    let garbled = Scratch::new("garbled.txt", "level 1 2 3\nclass 0 0 0 0 0 0 0 0\n");
    for (args, says) in [
        (
            vec!["--weights", "/nonexistent/weights.txt"],
            "/nonexistent/weights.txt",
        ),
        (vec!["--weights", garbled.path()], "line 1"),
        (vec!["--search", "lmr=1"], "no search number \"lmr\""),
        (vec!["--search", "lmr_k"], "is not NAME=VALUE"),
        (vec!["--search", "lmr_k=fast"], "\"fast\" is not a number"),
        (vec!["--search", "lmr_k=inf"], "\"inf\" is not a number"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `pbrain-caro bench 2` prints the Stockfish-style totals and exits 0.
#[test]
fn bench_mode_prints_the_node_count() {
    let out = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
        .args(["bench", "2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Nodes searched  : "), "{text}");
    assert!(text.contains("Search time (ms): "), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(": depth 2 ")).count(),
        4,
        "{text}"
    );
    // With threads (Lazy SMP): the same four searches, counts that vary from run to run.
    let out = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
        .args(["bench", "6", "2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.contains(": depth 6 ")).count(),
        4,
        "{text}"
    );
    for args in [
        &["bench", "zero"][..],
        &["bench", "6", "0"],
        &["bench", "6", "65"],
    ] {
        let bad = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "usage error: {args:?}");
    }
}

/// `pbrain-caro bench` takes `--weights` and `--search` as play does: the built-in weights'
/// own file and the default numbers count the same nodes as no flag, other numbers another
/// count (what a change of them costs or saves, before any game).
#[test]
fn bench_searches_with_the_tuning_flags() {
    let nodes = |extra: &[&str]| -> u64 {
        let out = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
            .args(["bench", "6"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("Nodes searched  : "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{text}"))
    };
    let plain = nodes(&[]);
    let same = Scratch::new(
        "bench-same.txt",
        include_str!("../../engine/src/search/weights.txt"),
    );
    let defaults = format!("lmp_quarters={}", SearchParams::default().lmp_quarters);
    assert_eq!(
        nodes(&["--weights", same.path(), "--search", &defaults]),
        plain
    );
    assert_ne!(nodes(&["--search", "lmp_quarters=12"]), plain);
    let bad = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
        .args(["bench", "6", "--search", "lmr=1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no search number \"lmr\""));
}

/// A reader that closes the pipe before the bench ends (`pbrain-caro bench | head`) ends the
/// bench quietly: exit status 0, nothing on stderr (Rust ignores SIGPIPE, so a careless
/// `println!` would panic there instead).
#[test]
fn bench_stops_quietly_when_its_reader_goes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pbrain-caro"))
        .args(["bench", "8"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the first position's search (tens of milliseconds) can end: its line is
    // written to a pipe nobody reads.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "no panic, no message"
    );
    assert!(out.status.success(), "{:?}", out.status);
}

/// `INFO thread_num n` (clamped to the machine's cores and 64; an unreadable value is
/// ignored, as any INFO) searches with threads: the answers are still legal, the forced block
/// is still found, and the process still ends cleanly (the helper threads are joined after
/// every move).
#[test]
fn thread_num_searches_with_threads() {
    let mut brain = started(0);
    brain.send("INFO thread_num many");
    brain.send("INFO thread_num 4096");
    brain.send("INFO thread_num 2");
    let mut taken = vec![brain.expect_move("BEGIN")];
    // A few moves of a game, each reply on an empty square.
    for (x, y) in [(0, 0), (14, 14), (0, 14)] {
        taken.push((x, y));
        let reply = brain.expect_move(&format!("TURN {x},{y}"));
        assert!(!taken.contains(&reply), "{reply:?} is taken: {taken:?}");
        taken.push(reply);
    }
    brain.expect("RESTART", "OK");
    let reply = brain.board(&CLOSED_FOUR);
    assert_eq!(reply, "8,7");
    brain.end();
}

/// Needs a search that sees the five: an engine that only answers legally fails this.
#[test]
fn strength_takes_the_winning_square_after_board() {
    let mut brain = started(0);
    let reply = brain.board(&WIN_NOW);
    assert!(
        reply == "3,7" || reply == "8,7",
        "{reply}: the five is at 3,7 or 8,7"
    );
    brain.end();
}

/// Needs the real search: the only defence against a four.
#[test]
fn strength_blocks_a_four_after_board() {
    let mut brain = started(0);
    // They (X, field 2) have four on row 7, closed at 3,7 by our stone: 8,7 is the only defence.
    let reply = brain.board(&CLOSED_FOUR);
    assert_eq!(reply, "8,7");
    brain.end();
}

/// `INFO rule 8` is caro as the Gomocup referee scores it: a five blocked at both ends does not
/// win, an overline always does, blocked or not (`caro_gomocup`, docs/rules.md). A game against
/// Pela under rule 8 was lost to an overline of six blocked by our stones at both ends, when we
/// played rule 8 as `caro_overline`. Row 7 holds a gapped run `2..=5, 7` closed at 1 and 8 by
/// the other side's stones: 6,7 makes six, blocked at both ends.
#[test]
fn strength_rule_8_counts_an_overline_blocked_at_both_ends() {
    let run = [2u8, 3, 4, 5, 7];
    let far = [(0, 0), (14, 0), (0, 14)];
    for continuous in [8, 10] {
        // Ours: taking 6,7 wins at once.
        let mut brain = started(continuous);
        let mut stones: Vec<(u8, u8, u8)> = run.iter().map(|&x| (x, 7, 1)).collect();
        stones.extend([(1, 7, 2), (8, 7, 2)]);
        stones.extend(far.iter().map(|&(x, y)| (x, y, 2)));
        assert_eq!(
            brain.board(&stones),
            "6,7",
            "rule {continuous}: the overline wins"
        );
        brain.end();
        // Theirs: 6,7 is the only defence.
        let mut brain = started(continuous);
        let mut stones: Vec<(u8, u8, u8)> = run.iter().map(|&x| (x, 7, 2)).collect();
        stones.extend([(1, 7, 1), (8, 7, 1)]);
        stones.extend(far.iter().map(|&(x, y)| (x, y, 1)));
        assert_eq!(
            brain.board(&stones),
            "6,7",
            "rule {continuous}: block the overline"
        );
        brain.end();
    }
}
