//! `pbrain-caro`: the caro-arena engine behind the Gomocup "new protocol" (protocol 2, the pipe
//! protocol of the Piskvork manager: <https://plastovicka.github.io/protocl2en.htm>), so that it
//! can play in Piskvork, c-gomoku-cli or a Gomocup tournament, and a `bench` mode that searches
//! fixed positions to a fixed depth and prints the node count (a regression signal).
//!
//! One thread reads commands and answers them; while the engine thinks, a watchdog thread
//! raises the stop flag at the hard deadline, so a search that overruns its budget still
//! answers in time. Standard library only. `docs/pbrain.md` documents every command.
//!
//! This binary must never write anything to stdout but protocol lines: the manager parses them.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use caro_engine::bot::{Bot, Level, Style};
use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use caro_engine::search::{is_mate, Engine, Limits, SearchInfo, WIN};
use caro_engine::{Board, Cell, Move, Rule, Rules, Status};

include!("../../benches/common/positions.rs");

/// What `ABOUT` answers (the protocol's `key="value"` list).
const ABOUT: &str = concat!(
    "name=\"pbrain-caro\", version=\"",
    env!("CARGO_PKG_VERSION"),
    "\", author=\"caro-arena\", country=\"Vietnam\", www=\"https://github.com/caro-arena/caro-arena\""
);

/// Commands answered with the pending error of an unsupported `INFO rule`.
const GAME_COMMANDS: [&str; 8] = [
    "START",
    "RECTSTART",
    "RESTART",
    "BEGIN",
    "TURN",
    "BOARD",
    "TAKEBACK",
    "PLAY",
];

/// The turn time when the manager sends none (Piskvork always sends `timeout_turn`).
const DEFAULT_TURN_MS: u64 = 5_000;
/// The budget when `timeout_turn` is 0, which the protocol defines as "play as fast as possible".
const FASTEST_MS: u64 = 10;
/// Transposition table size when the manager sets no memory limit.
const DEFAULT_TT_MB: usize = 64;
/// Moves we expect still to play, for sharing out the match clock: Gomocup games rarely last
/// more than 30 more moves for one side, and a fraction of the remaining time per move leaves
/// a reserve for long games.
const MOVES_TO_GO: u64 = 20;

/// Depth of `pbrain-caro classic` when none is given: the `classic` bot level's.
const CLASSIC_DEPTH: u8 = 4;
/// Deepest iteration of the full search when `--depth` is not given.
const FULL_DEPTH: u8 = 64;
/// The level's own time budget when `--time-ms` is not given: in effect none, the protocol's
/// clock decides.
const NO_TIME_CAP: Duration = Duration::from_secs(24 * 3600);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("classic") => {
            let depth = match args.get(1).map(|d| d.parse::<u8>()) {
                None => CLASSIC_DEPTH,
                Some(Ok(d)) if d > 0 && args.len() == 2 => d,
                Some(_) => usage(None),
            };
            let options = Options {
                level: Level {
                    style: Style::Classic,
                    max_depth: depth,
                    time: NO_TIME_CAP,
                    blunder: 0.0,
                },
                seed: 1,
            };
            serve(options);
        }
        Some("bench") => {
            let depth = match args.get(1).map(|d| d.parse::<u8>()) {
                None => BENCH_DEPTH,
                Some(Ok(d)) if d > 0 && args.len() == 2 => d,
                Some(_) => usage(None),
            };
            bench(depth);
        }
        _ => match parse_options(&args) {
            Ok(options) => serve(options),
            Err(e) => usage(Some(&e)),
        },
    }
}

/// How this process plays: a bot level (the same four numbers as a server bot's `Level` in
/// `config.toml`) and the seed of its blunders.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Options {
    level: Level,
    seed: u64,
}

/// Reads `--style full|classic`, `--depth N`, `--time-ms T`, `--blunder P` and `--seed S`
/// (each also as `--flag=value`), which map one to one onto [`Level`]. What is not given plays
/// as strong as we can: the full search, depth 64, no time cap of its own, no blunders.
fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut style = Style::Full;
    let (mut depth, mut time, mut blunder, mut seed) = (None, NO_TIME_CAP, 0.0, 1);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let Some(value) = inline.or_else(|| args.next().cloned()) else {
            return Err(format!("{flag} needs a value"));
        };
        let bad = || format!("bad value {value:?} for {flag}");
        match flag {
            "--style" => {
                style = match value.as_str() {
                    "full" => Style::Full,
                    "classic" => Style::Classic,
                    _ => return Err(bad()),
                }
            }
            "--depth" => {
                depth = Some(
                    value
                        .parse::<u8>()
                        .ok()
                        .filter(|&d| d > 0)
                        .ok_or_else(bad)?,
                )
            }
            "--time-ms" => {
                let ms = value
                    .parse::<u64>()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or_else(bad)?;
                time = Duration::from_millis(ms).min(NO_TIME_CAP);
            }
            "--blunder" => {
                blunder = value
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(bad)?
            }
            "--seed" => seed = value.parse::<u64>().map_err(|_| bad())?,
            _ => return Err(format!("unknown option {flag:?}")),
        }
    }
    let max_depth = depth.unwrap_or(match style {
        Style::Full => FULL_DEPTH,
        Style::Classic => CLASSIC_DEPTH,
    });
    Ok(Options {
        level: Level {
            style,
            max_depth,
            time,
            blunder,
        },
        seed,
    })
}

/// Speaks the protocol on stdin/stdout, playing at `options`' level.
fn serve(options: Options) {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut brain = Brain::new(options);
    brain.run(&mut stdin.lock(), &mut stdout.lock());
}

fn usage(error: Option<&str>) -> ! {
    if let Some(e) = error {
        eprintln!("pbrain-caro: {e}");
    }
    eprintln!(
        "usage: pbrain-caro [OPTIONS]         speak the Gomocup protocol on stdin/stdout\n       \
         pbrain-caro classic [depth]   the same as --style classic --depth depth (default {CLASSIC_DEPTH})\n       \
         pbrain-caro bench [depth]     search the bench positions to depth (default {BENCH_DEPTH})\n\
         options (a bot level, as in config.toml; the protocol's timeout_turn still applies):\n  \
         --style full|classic   which search (default full)\n  \
         --depth N              deepest iteration in plies (default {FULL_DEPTH}; classic {CLASSIC_DEPTH})\n  \
         --time-ms T            time per move, capped by the protocol's clock (default: the clock's)\n  \
         --blunder P            probability 0..1 of a deliberate weaker move (default 0)\n  \
         --seed S               seed of the blunders (default 1)"
    );
    std::process::exit(2);
}

/// Searches the fixed bench positions to `depth`, each with a fresh engine so the count does
/// not depend on the order, and prints per-position and total nodes (Stockfish's `bench`).
fn bench(depth: u8) {
    let stop = AtomicBool::new(false);
    let (mut total_nodes, start) = (0u64, Instant::now());
    for (id, board) in bench_boards() {
        let mut engine = Engine::new(16);
        let t = Instant::now();
        let r = engine.search(&board, &Limits::depth(depth), &stop, &mut |_| {});
        let (nodes, best, score) = r.map_or((0, String::from("-"), 0), |r| {
            (r.nodes, r.best.to_string(), r.score.get())
        });
        let id = short_id(&id);
        println!(
            "{id}: depth {depth} best {best} score {score} nodes {nodes} time {} ms",
            t.elapsed().as_millis()
        );
        total_nodes += nodes;
    }
    let elapsed = start.elapsed();
    println!("===========================");
    println!("Total time (ms) : {}", elapsed.as_millis());
    println!("Nodes searched  : {total_nodes}");
    println!(
        "Nodes/second    : {}",
        (total_nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64
    );
}

/// What the manager told us about time and memory (`INFO`); all times in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Clock {
    /// Time for one move; 0 means "as fast as possible".
    timeout_turn: u64,
    /// Time for the whole match; 0 means no limit. Protocol 2 obliges the manager to send
    /// `time_left` before every move when the match time is limited, so this only stands in for
    /// `time_left` until the first one arrives.
    timeout_match: u64,
    /// What remains of the match time; `None` when unlimited or never said.
    time_left: Option<u64>,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock {
            timeout_turn: DEFAULT_TURN_MS,
            timeout_match: 0,
            time_left: None,
        }
    }
}

impl Clock {
    /// The soft budget for the next move (handed to the search in [`Limits::time`]) and the
    /// hard deadline after which the watchdog stops it.
    ///
    /// The manager counts its own overhead (process switching, pipes) against us, so we keep a
    /// margin: a tenth of the turn time, at least 30 ms, from the turn limit; from the match
    /// clock (`time_left`) we spend `time_left / MOVES_TO_GO`, never more than what is left
    /// less the margin.
    ///
    /// `cap` is the level's own time per move (`--time-ms`): the soft budget is the smaller of
    /// the two, and the hard deadline follows from it.
    fn budget(&self, cap: Duration) -> (Duration, Duration) {
        let margin = |t: u64| (t / 10).max(30);
        let mut soft = if self.timeout_turn == 0 {
            FASTEST_MS
        } else {
            self.timeout_turn.saturating_sub(margin(self.timeout_turn))
        };
        let match_clock = (self.timeout_match > 0).then_some(self.timeout_match);
        if let Some(left) = self.time_left.or(match_clock) {
            let share = left / MOVES_TO_GO;
            soft = soft.min(share).min(left.saturating_sub(margin(left)));
        }
        let soft = soft
            .min(cap.as_millis().try_into().unwrap_or(u64::MAX))
            .max(1);
        // The search checks its clock between iterations and every few thousand nodes; the
        // watchdog is for a search that does not (or overruns): halfway into the margin.
        let hard = soft + (margin(soft) / 2).min(100);
        (Duration::from_millis(soft), Duration::from_millis(hard))
    }
}

/// Whether the command loop goes on.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// The protocol state: the game, the clock, the engine.
struct Brain {
    /// The game after `START`; `None` before.
    board: Option<Board>,
    /// Rule variant from `INFO rule` (Gomocup's default is freestyle, rule 0).
    rule: Rule,
    clock: Clock,
    tt_mb: usize,
    /// Plays at the level given on the command line: the full search, or the seed's classic
    /// search (stopped only by the watchdog), with or without blunders.
    bot: Bot,
    /// Set by an `INFO rule` we cannot play; every game command is answered with it until a
    /// rule we can play arrives.
    rule_error: Option<String>,
    /// Cells marked `3` in the last `BOARD` (the winning line of a previous game in continuous
    /// mode): not stones of either side, but we do not answer on them.
    marked: Vec<Move>,
}

impl Brain {
    fn new(options: Options) -> Brain {
        Brain {
            board: None,
            rule: Rule::Freestyle,
            clock: Clock::default(),
            tt_mb: DEFAULT_TT_MB,
            bot: Bot::with_table(options.level, options.seed, DEFAULT_TT_MB),
            rule_error: None,
            marked: Vec::new(),
        }
    }

    /// Reads and answers commands until `END` or the end of input.
    fn run(&mut self, input: &mut impl BufRead, out: &mut impl Write) {
        while let Some(line) = read_line(input) {
            if self.handle(line.trim(), input, out) == Flow::Quit {
                return;
            }
        }
    }

    /// Answers one command line (reading more lines for `BOARD`).
    fn handle(&mut self, line: &str, input: &mut impl BufRead, out: &mut impl Write) -> Flow {
        // The manager ignores empty lines and so do we.
        if line.is_empty() {
            return Flow::Continue;
        }
        let (command, args) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c, a.trim()),
            None => (line, ""),
        };
        let command_upper = command.to_ascii_uppercase();
        if let Some(error) = self.rule_error.clone() {
            if GAME_COMMANDS.contains(&command_upper.as_str()) {
                if command_upper == "BOARD" {
                    // Read the position up to DONE so its lines are not taken for commands.
                    while read_line(input).is_some_and(|l| !l.trim().eq_ignore_ascii_case("DONE")) {
                    }
                }
                send(out, &error);
                return Flow::Continue;
            }
        }
        let reply = match command_upper.as_str() {
            "START" => self.start_command(args),
            "RECTSTART" => self.rectstart_command(args),
            "RESTART" => self.restart_command(),
            "INFO" => {
                self.info_command(args);
                None
            }
            "BEGIN" => self.begin_command(out),
            "TURN" => self.turn_command(args, out),
            "BOARD" => self.board_command(input, out),
            "TAKEBACK" => self.takeback_command(args),
            "PLAY" => self.play_command(args),
            "ABOUT" => Some(ABOUT.to_string()),
            "END" => return Flow::Quit,
            // Protocol 2: "UNKNOWN [message]" for a command the brain does not know.
            _ => Some(format!("UNKNOWN command {command:?}")),
        };
        if let Some(reply) = reply {
            send(out, &reply);
        }
        Flow::Continue
    }

    /// A new game on a `width` x `height` board.
    fn new_game(&mut self, width: u64, height: u64) -> String {
        let size = |n: u64| u8::try_from(n).unwrap_or(u8::MAX);
        match Rules::caro(size(width), size(height), self.rule) {
            Ok(rules) => {
                self.board = Some(Board::new(rules));
                self.marked.clear();
                self.bot.clear();
                "OK".to_string()
            }
            Err(_) => {
                // No game until a START we accept: better than playing on the old board.
                self.board = None;
                format!(
                "ERROR unsupported size {width}x{height} (boards from {MIN_CARO_SIZE} to {MAX_SIZE})"
            )
            }
        }
    }

    fn start_command(&mut self, args: &str) -> Option<String> {
        Some(match args.parse::<u64>() {
            Ok(n) => self.new_game(n, n),
            Err(_) => format!("ERROR START expects a board size, got {args:?}"),
        })
    }

    fn rectstart_command(&mut self, args: &str) -> Option<String> {
        Some(match parse_pair(args) {
            Some((w, h)) => self.new_game(w, h),
            None => format!("ERROR RECTSTART expects width,height, got {args:?}"),
        })
    }

    fn restart_command(&mut self) -> Option<String> {
        Some(match &self.board {
            Some(board) => {
                let rules = *board.rules();
                self.board = Some(Board::new(rules));
                self.marked.clear();
                self.bot.clear();
                "OK".to_string()
            }
            None => no_game(),
        })
    }

    /// `INFO key value`: never answered (the manager does not read replies to INFO). Unknown
    /// keys and unreadable values are ignored, as protocol 2 asks; a rule we cannot play is
    /// reported at the next game command (see [`GAME_COMMANDS`]).
    fn info_command(&mut self, args: &str) -> Option<()> {
        let (key, value) = args.split_once(char::is_whitespace)?;
        let (key, value) = (key.to_ascii_lowercase(), value.trim());
        let number = || value.parse::<u64>().ok();
        match key.as_str() {
            "timeout_turn" => self.clock.timeout_turn = number()?,
            "timeout_match" => self.clock.timeout_match = number()?,
            "time_left" => {
                // May be negative once we are out of time; 2147483647 means no match limit.
                let left: i64 = value.parse().ok()?;
                self.clock.time_left = (left < i32::MAX as i64).then_some(left.max(0) as u64);
            }
            "max_memory" => {
                // Bytes, 0 = no limit. Half of it for the table leaves room for the rest.
                let bytes = number()?;
                let mb = if bytes == 0 {
                    DEFAULT_TT_MB
                } else {
                    ((bytes / 2) >> 20).clamp(1, DEFAULT_TT_MB as u64) as usize
                };
                if mb != self.tt_mb {
                    self.tt_mb = mb;
                    self.bot.resize_table(mb);
                }
            }
            "rule" => {
                let Some(rule) = value.parse::<u32>().ok().and_then(Rule::from_gomocup) else {
                    // Protocol 2: a brain that cannot meet an INFO "should wait with the output
                    // of the problem until the manager sends the first command not having an
                    // INFO form": the manager does not read replies to INFO, and an extra line
                    // now would be read as the answer to its next command.
                    self.rule_error = Some(format!(
                        "ERROR unsupported rule {value}: renju is not supported (rules 0, 1, 8, 9 are)"
                    ));
                    return None;
                };
                self.rule = rule;
                self.rule_error = None;
                // Replay the game so far under the new rule (managers normally send the rule
                // before the first move).
                if let Some(board) = &self.board {
                    let rules = Rules::caro(board.width(), board.height(), rule)
                        .expect("the size was accepted before");
                    let replayed = Board::from_moves(rules, board.moves())
                        .unwrap_or_else(|_| Board::new(rules));
                    self.board = Some(replayed);
                }
            }
            // game_type, folder, evaluate and anything newer: accepted and ignored.
            _ => {}
        }
        Some(())
    }

    fn begin_command(&mut self, out: &mut impl Write) -> Option<String> {
        if self.board.is_none() {
            return Some(no_game());
        }
        Some(self.think_and_play(out))
    }

    fn turn_command(&mut self, args: &str, out: &mut impl Write) -> Option<String> {
        let Some(board) = self.board.as_mut() else {
            return Some(no_game());
        };
        let Some((x, y)) = parse_pair(args) else {
            return Some(format!("ERROR TURN expects x,y, got {args:?}"));
        };
        match legal(board, x, y) {
            Ok(mv) => board.play_unchecked(mv),
            Err(e) => return Some(e),
        }
        Some(self.think_and_play(out))
    }

    /// `BOARD`, then `x,y,field` lines up to `DONE`: a whole position (field 1 = our stone,
    /// 2 = the opponent's, 3 = a winning-line mark in continuous mode), then our move.
    fn board_command(&mut self, input: &mut impl BufRead, out: &mut impl Write) -> Option<String> {
        let (mut own, mut theirs, mut marked) = (Vec::new(), Vec::new(), Vec::new());
        let mut error = None;
        loop {
            // None: the manager went away mid-command.
            let line = read_line(input)?;
            let l = line.trim();
            if l.eq_ignore_ascii_case("DONE") {
                break;
            }
            if l.is_empty() {
                continue;
            }
            let fields: Vec<Option<u8>> = l.split(',').map(|f| f.trim().parse().ok()).collect();
            match fields[..] {
                [Some(x), Some(y), Some(1)] => own.push(Move::new(x, y)),
                [Some(x), Some(y), Some(2)] => theirs.push(Move::new(x, y)),
                [Some(x), Some(y), Some(3)] => marked.push(Move::new(x, y)),
                _ => error = error.or(Some(format!("ERROR bad BOARD line {l:?}"))),
            }
        }
        let Some(board) = &self.board else {
            return Some(no_game());
        };
        if let Some(e) = error {
            return Some(e);
        }
        // We are to move, so we are X (black, who moves first) when the counts are equal.
        let (x, o) = if own.len() == theirs.len() {
            (&own, &theirs)
        } else {
            (&theirs, &own)
        };
        // With us to move, X has as many stones as O or one more; `set_up` checks the counts.
        match Board::set_up(*board.rules(), x, o) {
            Ok(b) => {
                self.board = Some(b);
                self.marked = marked;
            }
            Err(_) => {
                return Some(format!(
                    "ERROR impossible position: {} own and {} opponent stones with us to move",
                    own.len(),
                    theirs.len()
                ))
            }
        }
        Some(self.think_and_play(out))
    }

    /// `TAKEBACK x,y`: removes that stone (normally the last one played).
    fn takeback_command(&mut self, args: &str) -> Option<String> {
        let Some(board) = self.board.as_mut() else {
            return Some(no_game());
        };
        let Some((x, y)) = parse_pair(args) else {
            return Some(format!("ERROR TAKEBACK expects x,y, got {args:?}"));
        };
        let target = (x, y);
        if board.last_move().map(|m| (m.x as u64, m.y as u64)) == Some(target) {
            board.undo();
            return Some("OK".to_string());
        }
        // Not the last move (after BOARD the order is unknown): rebuild without that stone.
        let (mut xs, mut os) = (Vec::new(), Vec::new());
        let mut found = false;
        for (i, &m) in board.moves().iter().enumerate() {
            if (m.x as u64, m.y as u64) == target {
                found = true;
            } else if i % 2 == 0 {
                xs.push(m);
            } else {
                os.push(m);
            }
        }
        if !found {
            return Some(format!("ERROR no stone on {x},{y} to take back"));
        }
        match Board::set_up(*board.rules(), &xs, &os) {
            Ok(b) => {
                *board = b;
                Some("OK".to_string())
            }
            Err(e) => Some(format!("ERROR cannot take back {x},{y}: {e}")),
        }
    }

    /// `PLAY x,y` (Yixin board extension): the manager tells us which move to play; we play it
    /// for our side and confirm it.
    fn play_command(&mut self, args: &str) -> Option<String> {
        let Some(board) = self.board.as_mut() else {
            return Some(no_game());
        };
        let Some((x, y)) = parse_pair(args) else {
            return Some(format!("ERROR PLAY expects x,y, got {args:?}"));
        };
        Some(match legal(board, x, y) {
            Ok(mv) => {
                board.play_unchecked(mv);
                mv.to_string()
            }
            Err(e) => e,
        })
    }

    /// Chooses our move within the clock, plays it on our board and returns the answer line.
    fn think_and_play(&mut self, out: &mut impl Write) -> String {
        let board = self.board.as_mut().expect("callers check for a game");
        match board.status() {
            Status::Ongoing => {}
            Status::Draw => return "ERROR the board is full".to_string(),
            Status::Won(winner) => {
                // Only a continuous game (rule bit 2) or an analysis tool sends a position that
                // already holds a five. We answer a legal move without searching: the empty
                // cell nearest the centre. The board keeps the won position.
                return match fallback_move(board, &self.marked) {
                    Some(mv) => {
                        send(
                            out,
                            &format!("MESSAGE the game is already won by {winner}; not searching"),
                        );
                        mv.to_string()
                    }
                    None => "ERROR the board is full".to_string(),
                };
            }
        }
        let (soft, hard) = self.clock.budget(self.bot.level().time);
        let stop = AtomicBool::new(false);
        let bot = &mut self.bot;
        let result = std::thread::scope(|scope| {
            let (done, watch) = mpsc::channel::<()>();
            let stop = &stop;
            scope.spawn(move || {
                // Woken early when the search returns (the sender is dropped).
                if let Err(mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(hard) {
                    stop.store(true, Ordering::Relaxed);
                }
            });
            let mut report = |info: &SearchInfo| send(out, &format!("MESSAGE {}", describe(info)));
            let result = bot.choose_within(board, soft, stop, &mut report);
            drop(done);
            result
        });
        let best = result
            .map(|r| r.best)
            .filter(|mv| board.check(mv.x as i64, mv.y as i64).is_ok() && !self.marked.contains(mv))
            .or_else(|| fallback_move(board, &self.marked));
        match best {
            Some(mv) => {
                board.play_unchecked(mv);
                mv.to_string()
            }
            None => "ERROR no legal move".to_string(),
        }
    }
}

/// One progress line: depth, score (or mate distance), nodes, speed, time and principal
/// variation, in the `key value` style most Gomocup engines print.
fn describe(info: &SearchInfo) -> String {
    let score = if is_mate(info.score) {
        let plies = WIN - info.score.abs();
        let sign = if info.score > 0 { "+" } else { "-" };
        format!("{sign}M{plies}")
    } else {
        info.score.to_string()
    };
    let pv: Vec<String> = info.pv.iter().map(Move::to_string).collect();
    format!(
        "depth {} score {score} nodes {} nps {} time {} pv {}",
        info.depth,
        info.nodes,
        info.nps,
        info.elapsed.as_millis(),
        pv.join(" ")
    )
}

/// The empty, unmarked cell nearest the centre (row by row among equals); `None` when full.
fn fallback_move(board: &Board, marked: &[Move]) -> Option<Move> {
    let (cx, cy) = (board.width() as i64 / 2, board.height() as i64 / 2);
    (0..board.height())
        .flat_map(|y| (0..board.width()).map(move |x| Move::new(x, y)))
        .filter(|m| board.get(m.x as i64, m.y as i64) == Cell::Empty)
        .filter(|m| !marked.contains(m))
        .min_by_key(|m| {
            let (dx, dy) = (m.x as i64 - cx, m.y as i64 - cy);
            dx * dx + dy * dy
        })
}

/// The move (`x`, `y`) if it can be played now, else the `ERROR` line saying why.
fn legal(board: &Board, x: u64, y: u64) -> Result<Move, String> {
    let coord = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    board
        .check(coord(x), coord(y))
        .map_err(|e| format!("ERROR illegal move {x},{y}: {e}"))
}

/// The next input line, `None` at the end of input. Bytes that are not UTF-8 are replaced
/// rather than fatal: garbage gets an error reply, not a dead engine.
fn read_line(input: &mut impl BufRead) -> Option<String> {
    let mut bytes = Vec::new();
    match input.read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// `x,y` as two numbers.
fn parse_pair(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn no_game() -> String {
    "ERROR no game: send START first".to_string()
}

/// Writes one line and flushes it: the manager waits for whole lines (protocol 2 warns about
/// buffered output).
fn send(out: &mut impl Write, line: &str) {
    // A closed pipe means the manager is gone; the next read ends the loop.
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Duration) -> u64 {
        d.as_millis() as u64
    }

    #[test]
    fn turn_budget_keeps_a_margin() {
        let clock = Clock {
            timeout_turn: 5_000,
            ..Clock::default()
        };
        let (soft, hard) = clock.budget(NO_TIME_CAP);
        assert_eq!(ms(soft), 4_500);
        assert!(ms(hard) < 5_000 && ms(hard) > ms(soft));
        let fast = Clock {
            timeout_turn: 100,
            ..Clock::default()
        };
        assert_eq!(ms(fast.budget(NO_TIME_CAP).0), 70);
        assert!(ms(fast.budget(NO_TIME_CAP).1) < 100);
    }

    #[test]
    fn match_clock_is_shared_over_the_moves_to_go() {
        let clock = Clock {
            timeout_turn: 30_000,
            timeout_match: 180_000,
            time_left: Some(60_000),
        };
        assert_eq!(ms(clock.budget(NO_TIME_CAP).0), 60_000 / MOVES_TO_GO);
        let nearly_out = Clock {
            time_left: Some(20),
            ..clock
        };
        assert_eq!(ms(nearly_out.budget(NO_TIME_CAP).0), 1);
    }

    #[test]
    fn the_level_time_caps_the_budget() {
        let clock = Clock {
            timeout_turn: 5_000,
            ..Clock::default()
        };
        let (soft, hard) = clock.budget(Duration::from_millis(200));
        assert_eq!(ms(soft), 200);
        assert!(ms(hard) > 200 && ms(hard) < 300, "{hard:?}");
        // The protocol's clock wins when it is the smaller.
        assert_eq!(ms(clock.budget(Duration::from_millis(9_000)).0), 4_500);
    }

    fn options(args: &[&str]) -> Result<Options, String> {
        parse_options(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_map_onto_a_level() {
        let o = options(&[]).unwrap();
        assert_eq!(
            (o.level.style, o.level.max_depth, o.level.blunder, o.seed),
            (Style::Full, FULL_DEPTH, 0.0, 1)
        );
        let o = options(&[
            "--depth",
            "6",
            "--time-ms=250",
            "--blunder",
            "0.25",
            "--seed",
            "9",
        ])
        .unwrap();
        assert_eq!(
            o.level,
            Level {
                style: Style::Full,
                max_depth: 6,
                time: Duration::from_millis(250),
                blunder: 0.25,
            }
        );
        assert_eq!(o.seed, 9);
        let o = options(&["--style", "classic"]).unwrap();
        assert_eq!(
            (o.level.style, o.level.max_depth),
            (Style::Classic, CLASSIC_DEPTH)
        );
        for bad in [
            &["--depth", "0"][..],
            &["--depth"],
            &["--blunder", "1.5"],
            &["--time-ms", "0"],
            &["--style", "fast"],
            &["--seed", "-1"],
            &["--level", "strong"],
            &["7"],
        ] {
            assert!(options(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn zero_turn_time_means_fast() {
        let clock = Clock {
            timeout_turn: 0,
            ..Clock::default()
        };
        assert_eq!(ms(clock.budget(NO_TIME_CAP).0), FASTEST_MS);
    }

    #[test]
    fn fallback_prefers_the_centre() {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let board = Board::from_moves(rules, &[Move::new(7, 7)]).unwrap();
        assert_eq!(fallback_move(&board, &[]), Some(Move::new(7, 6)));
        assert_eq!(
            fallback_move(&board, &[Move::new(7, 6)]),
            Some(Move::new(6, 7))
        );
    }
}
