//! `pbrain-caro`: the caro-arena engine behind the Gomocup "new protocol" (protocol 2, the pipe
//! protocol of the Piskvork manager: <https://plastovicka.github.io/protocl2en.htm>), so that it
//! can play in Piskvork, c-gomoku-cli or a Gomocup tournament, and a `bench` mode that searches
//! fixed positions to a fixed depth and prints the node count (a regression signal).
//!
//! One thread reads commands and answers them; while the engine thinks, a watchdog thread
//! raises the stop flag at the hard deadline, so a search that overruns its budget still
//! answers in time. The protocol's lines are read and written with `caro-gomocup`, the
//! arguments with clap; the engine library it drives stays std only. `docs/pbrain.md`
//! documents every command.
//!
//! This binary must never write anything to stdout but protocol lines: the manager parses them.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use caro_engine::bot::{self, Bot, Level, Style};
use caro_engine::positions::{bench_boards, short_id, BENCH_DEPTH};
use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use caro_engine::search::negamax::MAX_THREADS;
use caro_engine::search::params::SearchParams;
use caro_engine::search::time::{self, Budget};
use caro_engine::search::weights::Weights;
use caro_engine::search::{is_mate, Engine, Limits, SearchInfo, WIN};
use caro_engine::spsa;
use caro_engine::{Board, Cell, Move, Rule, Rules, Status};
use caro_gomocup::{BadCommand, Command, Field, Info, Reply, Stone};
use clap::{value_parser, Args, Parser, Subcommand, ValueEnum};

/// What `ABOUT` answers (the protocol's `key="value"` list).
const ABOUT: &str = concat!(
    "name=\"pbrain-caro\", version=\"",
    env!("CARGO_PKG_VERSION"),
    "\", author=\"caro-arena\", country=\"Vietnam\", www=\"https://github.com/caro-arena/caro-arena\""
);

/// The turn time when the manager sends none (Piskvork always sends `timeout_turn`).
const DEFAULT_TURN_MS: u64 = 5_000;
/// Transposition table size when the manager sets no memory limit.
const DEFAULT_TT_MB: usize = 64;

/// Depth of `pbrain-caro classic` when none is given: the `classic` bot level's.
const CLASSIC_DEPTH: u8 = 4;
/// Deepest iteration of the full search when `--depth` is not given.
const FULL_DEPTH: u8 = 64;
/// The level's own time budget when `--time-ms` is not given: in effect none, the protocol's
/// clock decides.
const NO_TIME_CAP: Duration = Duration::from_secs(24 * 3600);

fn main() {
    let cli = Cli::parse();
    match cli.mode {
        Some(Mode::Bench {
            depth,
            threads,
            tuning,
        }) => {
            let tuning = tuning.tuning();
            if let Err(e) = bench(depth, threads, &tuning, &mut io::stdout().lock()) {
                // A reader that stops reading (`pbrain-caro bench | head -3`) ends the bench
                // quietly, as it ends any Unix filter; any other failure to write is reported.
                if e.kind() != io::ErrorKind::BrokenPipe {
                    eprintln!("pbrain-caro: writing the bench results: {e}");
                    std::process::exit(1);
                }
            }
        }
        Some(Mode::Classic { depth }) => serve(Options {
            level: Level {
                style: Style::Classic,
                max_depth: depth,
                time: NO_TIME_CAP,
                blunder: 0.0,
                search: SearchParams::default(),
            },
            seed: 1,
            nodes: None,
            threads: 1,
            // The level's flags conflict with the subcommand: nothing tunes the classic search.
            weights: None,
        }),
        None => serve(cli.level.options()),
    }
}

/// The command line. A malformed one is a usage error (exit status 2, nothing on stdout), never
/// a brain that plays something else.
#[derive(Debug, Parser)]
#[command(
    name = "pbrain-caro",
    version,
    about = "Speaks the Gomocup protocol on stdin/stdout (docs/pbrain.md)",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    // A flag given twice takes its last value, as before clap (a wrapper may append a level's
    // flags to a command line that has some).
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    mode: Option<Mode>,
    #[command(flatten)]
    level: LevelArgs,
}

/// What to do instead of playing at the level of the flags.
#[derive(Debug, Subcommand)]
enum Mode {
    /// Play the seed's classic search, the same as --style classic --depth DEPTH.
    Classic {
        /// Deepest iteration in plies.
        #[arg(default_value_t = CLASSIC_DEPTH, value_parser = value_parser!(u8).range(1..))]
        depth: u8,
    },
    /// Search the bench positions to DEPTH and print the node count.
    Bench {
        /// Depth of every search.
        #[arg(default_value_t = BENCH_DEPTH, value_parser = value_parser!(u8).range(1..))]
        depth: u8,
        /// Search threads (Lazy SMP; the node count is reproducible only with one).
        #[arg(default_value_t = 1, value_parser = value_parser!(u64).range(1..=MAX_THREADS as u64))]
        threads: u64,
        /// The weights and numbers searched with, as for play (boxed: a set of weights is
        /// large).
        #[command(flatten)]
        tuning: Box<TuningArgs>,
    },
}

/// A bot level, as in config.toml (the protocol's timeout_turn still applies). What is not
/// given plays as strong as we can: the full search, depth 64, no time cap of its own, no
/// blunders.
#[derive(Debug, Args)]
struct LevelArgs {
    /// Which search.
    #[arg(long, value_enum, default_value_t = StyleArg::Full)]
    style: StyleArg,
    /// Deepest iteration in plies [default: 64; classic 4].
    #[arg(long, value_parser = value_parser!(u8).range(1..))]
    depth: Option<u8>,
    /// Time per move in milliseconds, capped by the protocol's clock [default: the clock's].
    #[arg(long = "time-ms", value_parser = value_parser!(u64).range(1..))]
    time_ms: Option<u64>,
    /// Probability 0..1 of a deliberate weaker move.
    #[arg(long, default_value_t = 0.0, value_parser = probability)]
    blunder: f64,
    /// Seed of the blunders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Node budget per move of the full search, besides the clock (fixed-node self-play).
    #[arg(long, value_parser = value_parser!(u64).range(1..))]
    nodes: Option<u64>,
    /// Search threads (Lazy SMP) until the manager sends INFO thread_num.
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u64).range(1..=MAX_THREADS as u64))]
    threads: u64,
    #[command(flatten)]
    tuning: TuningArgs,
}

/// The full search's weights and tunable numbers, for play and for `bench` (whose node count
/// then says what they cost).
#[derive(Debug, Args)]
struct TuningArgs {
    /// Evaluate with the weights of FILE (the format of the engine's search/weights.txt)
    /// instead of the built-in ones: for tuning and trying weights without a rebuild.
    #[arg(long, value_name = "FILE", value_parser = weights_file)]
    weights: Option<Weights>,
    /// Set one of the full search's tunable numbers (docs/pbrain.md lists them), e.g.
    /// `--search lmr_k=0.7`; may be given many times.
    #[arg(long = "search", value_name = "NAME=VALUE", value_parser = search_number)]
    search: Vec<(String, f64)>,
    /// Start from the bot levels' numbers (`caro_engine::bot::level_params`: quiet moves
    /// ordered by the cell values, the numbers the ladder was measured with) instead of the
    /// engine's; `--search` flags still apply over them. Plays as a server level without
    /// `learnt_ordering`.
    #[arg(long)]
    level_numbers: bool,
}

/// `--weights`: the file, read and parsed.
fn weights_file(path: &str) -> Result<Weights, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Weights::parse(&text).map_err(|e| format!("{path}: {e}"))
}

/// `--search`: a known name and a finite number.
fn search_number(s: &str) -> Result<(String, f64), spsa::SearchWordError> {
    spsa::parse_search_word(s).map(|(name, value)| (name.to_string(), value))
}

/// `--style`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum StyleArg {
    Full,
    Classic,
}

fn probability(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("{s:?} is not a probability in 0..=1"))
}

impl LevelArgs {
    /// The flags map one to one onto [`Level`].
    fn options(&self) -> Options {
        let style = match self.style {
            StyleArg::Full => Style::Full,
            StyleArg::Classic => Style::Classic,
        };
        let max_depth = self.depth.unwrap_or(match style {
            Style::Full => FULL_DEPTH,
            Style::Classic => CLASSIC_DEPTH,
        });
        let time = self
            .time_ms
            .map_or(NO_TIME_CAP, |ms| Duration::from_millis(ms).min(NO_TIME_CAP));
        let tuning = self.tuning.tuning();
        Options {
            level: Level {
                style,
                max_depth,
                time,
                blunder: self.blunder,
                search: tuning.search,
            },
            seed: self.seed,
            nodes: self.nodes,
            threads: self.threads as usize,
            weights: tuning.weights,
        }
    }
}

impl TuningArgs {
    /// `--weights` and `--search` (over `--level-numbers`), later `--search` flags over
    /// earlier ones.
    fn tuning(&self) -> Tuning {
        let mut search = if self.level_numbers {
            bot::level_params()
        } else {
            SearchParams::default()
        };
        for (name, value) in &self.search {
            let known = spsa::set_search(&mut search, name, *value);
            debug_assert!(known, "checked by search_number");
        }
        Tuning {
            weights: self.weights,
            search,
        }
    }
}

/// What the full search evaluates and prunes with: the built-in weights and numbers unless
/// `--weights` or `--search` say otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tuning {
    weights: Option<Weights>,
    search: SearchParams,
}

/// How this process plays: a bot level (the same four numbers as a server bot's `Level` in
/// `config.toml`) and the seed of its blunders.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Options {
    level: Level,
    seed: u64,
    /// `--nodes`: a node budget per move besides the clock, not a `Level` field (the server's
    /// bots have none); for self-play whose result does not depend on the machine's load.
    nodes: Option<u64>,
    /// `--threads`: search threads until `INFO thread_num` says otherwise.
    threads: usize,
    /// `--weights` (the `--search` numbers are the level's, `Level::search`).
    weights: Option<Weights>,
}

impl Tuning {
    /// A full-search engine with a table of `tt_mb` megabytes searching with these weights and
    /// numbers.
    fn engine(&self, tt_mb: usize) -> Engine {
        let mut engine = Engine::new(tt_mb);
        if let Some(w) = &self.weights {
            engine.set_weights(w);
        }
        engine.set_search_params(&self.search);
        engine
    }
}

/// Speaks the protocol on stdin/stdout, playing at `options`' level.
fn serve(options: Options) {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut brain = Brain::new(options);
    brain.run(&mut stdin.lock(), &mut stdout.lock());
}

/// Searches the fixed bench positions to `depth`, each with a fresh engine so the count does
/// not depend on the order, and writes per-position and total nodes to `out` (Stockfish's
/// `bench`), stopping at the first failed write. Nodes per second count the searches' time
/// alone: making each fresh engine (its 16 MB table zeroed) is not search, and it weighed a
/// quarter of the run once the bench searched 120k nodes. With more than one thread the count
/// and even the moves vary from run to run (the threads race); the times are then the time to
/// reach `depth`. `tuning` is what `--weights` and `--search` gave (the built-in numbers unless
/// they did).
fn bench(depth: u8, threads: u64, tuning: &Tuning, out: &mut impl Write) -> io::Result<()> {
    let stop = AtomicBool::new(false);
    let (mut total_nodes, start) = (0u64, Instant::now());
    let mut searching = Duration::ZERO;
    for (id, board) in bench_boards() {
        let mut engine = tuning.engine(16);
        engine.set_threads(threads as usize);
        let t = Instant::now();
        let r = engine.search(&board, &Limits::depth(depth), &stop, &mut |_| {});
        searching += t.elapsed();
        let (nodes, best, score) = r.map_or((0, String::from("-"), 0), |r| {
            (r.nodes, r.best.to_string(), r.score.get())
        });
        let id = short_id(&id);
        writeln!(
            out,
            "{id}: depth {depth} best {best} score {score} nodes {nodes} time {} ms",
            t.elapsed().as_millis()
        )?;
        out.flush()?;
        total_nodes += nodes;
    }
    let elapsed = start.elapsed();
    writeln!(out, "===========================")?;
    writeln!(out, "Total time (ms) : {}", elapsed.as_millis())?;
    writeln!(out, "Search time (ms): {}", searching.as_millis())?;
    writeln!(out, "Nodes searched  : {total_nodes}")?;
    writeln!(
        out,
        "Nodes/second    : {}",
        (total_nodes as f64 / searching.as_secs_f64().max(1e-9)) as u64
    )?;
    out.flush()
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
    /// The next move's budget (the search's optimum time and, under a match clock, the most
    /// it may stretch to: `caro_engine::search::time::allocate`, which keeps the margins) and
    /// the hard deadline after which the watchdog stops the search.
    ///
    /// `cap` is the level's own time per move (`--time-ms`): both times are at most that, and
    /// the hard deadline follows from them.
    fn budget(&self, cap: Duration) -> (Budget, Duration) {
        let match_clock = (self.timeout_match > 0).then_some(self.timeout_match);
        let budget = time::allocate(self.timeout_turn, self.time_left.or(match_clock), cap);
        // The search checks its clock between iterations and every few thousand nodes; the
        // watchdog is for a search that does not (or overruns): halfway into the margin.
        let most = budget.hard().as_millis() as u64;
        let hard = most + (time::margin(most) / 2).min(100);
        (budget, Duration::from_millis(hard))
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
    rule_error: Option<Reply>,
    /// Cells marked `3` in the last `BOARD` (the winning line of a previous game in continuous
    /// mode): not stones of either side, but we do not answer on them.
    marked: Vec<Move>,
    /// `--nodes`: the full search's node budget per move.
    nodes: Option<u64>,
}

/// The threads `INFO thread_num n` gets: at least one, at most what the machine runs at once
/// and [`MAX_THREADS`] (a manager that offers more cores than there are gains nothing from
/// threads that take turns on one).
fn thread_count(n: u64, available: usize) -> usize {
    let most = available.clamp(1, MAX_THREADS);
    usize::try_from(n).unwrap_or(usize::MAX).clamp(1, most)
}

impl Brain {
    fn new(options: Options) -> Brain {
        let tuning = Tuning {
            weights: options.weights,
            search: options.level.search,
        };
        let engine = tuning.engine(DEFAULT_TT_MB);
        let mut bot = Bot::with_engine(options.level, options.seed, engine);
        bot.set_threads(options.threads);
        Brain {
            board: None,
            rule: Rule::Freestyle,
            clock: Clock::default(),
            tt_mb: DEFAULT_TT_MB,
            bot,
            rule_error: None,
            marked: Vec::new(),
            nodes: options.nodes,
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
        let command = Command::parse(line);
        if let Some(error) = &self.rule_error {
            // A malformed command is always a game command (`INFO` never fails to parse).
            if command.as_ref().map_or(true, is_game_command) {
                if command == Ok(Command::Board) {
                    // Read the position up to DONE so its lines are not taken for commands.
                    while read_line(input).is_some_and(|l| !l.trim().eq_ignore_ascii_case("DONE")) {
                    }
                }
                send(out, error);
                return Flow::Continue;
            }
        }
        let reply = match command {
            Err(bad) => Some(self.bad_command(bad)),
            Ok(Command::Start(n)) => Some(self.new_game(n, n)),
            Ok(Command::RectStart(w, h)) => Some(self.new_game(w, h)),
            Ok(Command::Restart) => Some(self.restart_command()),
            Ok(Command::Info(info)) => {
                self.info_command(info);
                None
            }
            Ok(Command::Begin) => Some(self.begin_command(out)),
            Ok(Command::Turn(x, y)) => Some(self.turn_command(x, y, out)),
            Ok(Command::Board) => self.board_command(input, out),
            Ok(Command::Takeback(x, y)) => Some(self.takeback_command(x, y)),
            Ok(Command::Play(x, y)) => Some(self.play_command(x, y)),
            Ok(Command::About) => Some(Reply::Other(ABOUT.to_string())),
            Ok(Command::End) => return Flow::Quit,
            // Protocol 2: "UNKNOWN [message]" for a command the brain does not know.
            Ok(Command::Unknown(word)) => Some(Reply::Unknown(format!("command {word:?}"))),
        };
        if let Some(reply) = reply {
            send(out, &reply);
        }
        Flow::Continue
    }

    /// The reply to a command whose arguments cannot be read. The moves (`TURN`, `TAKEBACK`,
    /// `PLAY`) need a game first: without one, that is the error.
    fn bad_command(&self, bad: BadCommand) -> Reply {
        let starts_a_game = matches!(bad.command, "START" | "RECTSTART");
        if !starts_a_game && self.board.is_none() {
            return no_game();
        }
        Reply::Error(bad.to_string())
    }

    /// A new game on a `width` x `height` board.
    fn new_game(&mut self, width: u64, height: u64) -> Reply {
        let size = |n: u64| u8::try_from(n).unwrap_or(u8::MAX);
        match Rules::caro(size(width), size(height), self.rule) {
            Ok(rules) => {
                self.board = Some(Board::new(rules));
                self.marked.clear();
                self.bot.clear();
                Reply::Ok
            }
            Err(_) => {
                // No game until a START we accept: better than playing on the old board.
                self.board = None;
                Reply::Error(format!(
                    "unsupported size {width}x{height} (boards from {MIN_CARO_SIZE} to {MAX_SIZE})"
                ))
            }
        }
    }

    fn restart_command(&mut self) -> Reply {
        match &self.board {
            Some(board) => {
                let rules = *board.rules();
                self.board = Some(Board::new(rules));
                self.marked.clear();
                self.bot.clear();
                Reply::Ok
            }
            None => no_game(),
        }
    }

    /// `INFO key value`: never answered (the manager does not read replies to INFO). Unknown
    /// keys and unreadable values are ignored, as protocol 2 asks; a rule we cannot play is
    /// reported at the next game command (see [`is_game_command`]).
    fn info_command(&mut self, info: Info) {
        match info {
            Info::TimeoutTurn(ms) => self.clock.timeout_turn = ms,
            Info::TimeoutMatch(ms) => self.clock.timeout_match = ms,
            Info::TimeLeft(left) => {
                // May be negative once we are out of time; 2147483647 means no match limit.
                self.clock.time_left = (left < i32::MAX as i64).then_some(left.max(0) as u64);
            }
            Info::MaxMemory(bytes) => {
                // Bytes, 0 = no limit. Half of it for the table leaves room for the rest.
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
            Info::UnsupportedRule(value) => {
                // Protocol 2: a brain that cannot meet an INFO "should wait with the output
                // of the problem until the manager sends the first command not having an
                // INFO form": the manager does not read replies to INFO, and an extra line
                // now would be read as the answer to its next command.
                self.rule_error = Some(Reply::Error(format!(
                    "unsupported rule {value}: renju is not supported (rules 0, 1, 8, 9 are)"
                )));
            }
            Info::Rule(rule) => {
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
            Info::ThreadNum(n) => {
                let available = std::thread::available_parallelism().map_or(1, |n| n.get());
                self.bot.set_threads(thread_count(n, available));
            }
            // game_type, folder, evaluate and anything newer: accepted and ignored.
            Info::GameType(_) | Info::Other { .. } => {}
        }
    }

    fn begin_command(&mut self, out: &mut impl Write) -> Reply {
        if self.board.is_none() {
            return no_game();
        }
        self.think_and_play(out)
    }

    fn turn_command(&mut self, x: u64, y: u64, out: &mut impl Write) -> Reply {
        let Some(board) = self.board.as_mut() else {
            return no_game();
        };
        match legal(board, x, y) {
            Ok(mv) => board.play_unchecked(mv),
            Err(e) => return e,
        }
        self.think_and_play(out)
    }

    /// `BOARD`, then `x,y,field` lines up to `DONE`: a whole position (field 1 = our stone,
    /// 2 = the opponent's, 3 = a winning-line mark in continuous mode), then our move.
    fn board_command(&mut self, input: &mut impl BufRead, out: &mut impl Write) -> Option<Reply> {
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
            match Stone::parse(l) {
                Some(Stone { mv, field }) => match field {
                    Field::Own => own.push(mv),
                    Field::Opponent => theirs.push(mv),
                    Field::WinningLine => marked.push(mv),
                },
                None => error = error.or(Some(format!("bad BOARD line {l:?}"))),
            }
        }
        let Some(board) = &self.board else {
            return Some(no_game());
        };
        if let Some(e) = error {
            return Some(Reply::Error(e));
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
                return Some(Reply::Error(format!(
                    "impossible position: {} own and {} opponent stones with us to move",
                    own.len(),
                    theirs.len()
                )))
            }
        }
        Some(self.think_and_play(out))
    }

    /// `TAKEBACK x,y`: removes that stone (normally the last one played).
    fn takeback_command(&mut self, x: u64, y: u64) -> Reply {
        let Some(board) = self.board.as_mut() else {
            return no_game();
        };
        let target = (x, y);
        if board.last_move().map(|m| (m.x as u64, m.y as u64)) == Some(target) {
            board.undo();
            return Reply::Ok;
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
            return Reply::Error(format!("no stone on {x},{y} to take back"));
        }
        match Board::set_up(*board.rules(), &xs, &os) {
            Ok(b) => {
                *board = b;
                Reply::Ok
            }
            Err(e) => Reply::Error(format!("cannot take back {x},{y}: {e}")),
        }
    }

    /// `PLAY x,y` (Yixin board extension): the manager tells us which move to play; we play it
    /// for our side and confirm it.
    fn play_command(&mut self, x: u64, y: u64) -> Reply {
        let Some(board) = self.board.as_mut() else {
            return no_game();
        };
        match legal(board, x, y) {
            Ok(mv) => {
                board.play_unchecked(mv);
                Reply::mv(mv)
            }
            Err(e) => e,
        }
    }

    /// Chooses our move within the clock, plays it on our board and returns the answer line.
    fn think_and_play(&mut self, out: &mut impl Write) -> Reply {
        let board = self.board.as_mut().expect("callers check for a game");
        match board.status() {
            Status::Ongoing => {}
            Status::Draw => return Reply::Error("the board is full".to_string()),
            Status::Won(winner) => {
                // Only a continuous game (rule bit 2) or an analysis tool sends a position that
                // already holds a five. We answer a legal move without searching: the empty
                // cell nearest the centre. The board keeps the won position.
                return match fallback_move(board, &self.marked) {
                    Some(mv) => {
                        send(
                            out,
                            &Reply::Message(format!(
                                "the game is already won by {winner}; not searching"
                            )),
                        );
                        Reply::mv(mv)
                    }
                    None => Reply::Error("the board is full".to_string()),
                };
            }
        }
        let (budget, hard) = self.clock.budget(self.bot.level().time);
        let stop = AtomicBool::new(false);
        let bot = &mut self.bot;
        let nodes = self.nodes;
        let result = std::thread::scope(|scope| {
            let (done, watch) = mpsc::channel::<()>();
            let stop = &stop;
            scope.spawn(move || {
                // Woken early when the search returns (the sender is dropped).
                if let Err(mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(hard) {
                    stop.store(true, Ordering::Relaxed);
                }
            });
            let mut report = |info: &SearchInfo| send(out, &Reply::Message(describe(info)));
            let result = bot.choose_limited(board, budget, nodes, stop, &mut report);
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
                Reply::mv(mv)
            }
            None => Reply::Error("no legal move".to_string()),
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

/// The move (`x`, `y`) if it can be played now, else the `ERROR` saying why.
fn legal(board: &Board, x: u64, y: u64) -> Result<Move, Reply> {
    let coord = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    board
        .check(coord(x), coord(y))
        .map_err(|e| Reply::Error(format!("illegal move {x},{y}: {e}")))
}

/// The commands answered with the pending error of an unsupported `INFO rule`.
fn is_game_command(command: &Command) -> bool {
    matches!(
        command,
        Command::Start(_)
            | Command::RectStart(..)
            | Command::Restart
            | Command::Begin
            | Command::Turn(..)
            | Command::Board
            | Command::Takeback(..)
            | Command::Play(..)
    )
}

/// The next input line, `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> Option<String> {
    let mut bytes = Vec::new();
    match input.read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(caro_gomocup::decode_line(&bytes)),
    }
}

fn no_game() -> Reply {
    Reply::Error("no game: send START first".to_string())
}

/// Writes one line and flushes it: the manager waits for whole lines (protocol 2 warns about
/// buffered output).
fn send(out: &mut impl Write, reply: &Reply) {
    // A closed pipe means the manager is gone; the next read ends the loop.
    let _ = writeln!(out, "{reply}").and_then(|_| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Duration) -> u64 {
        d.as_millis() as u64
    }

    /// The optimum of the next move's budget.
    fn soft(clock: &Clock, cap: Duration) -> u64 {
        ms(clock.budget(cap).0.optimum)
    }

    #[test]
    fn turn_budget_keeps_a_margin() {
        let clock = Clock {
            timeout_turn: 5_000,
            ..Clock::default()
        };
        let (budget, hard) = clock.budget(NO_TIME_CAP);
        assert_eq!((ms(budget.optimum), budget.maximum), (4_500, None));
        assert!(ms(hard) < 5_000 && ms(hard) > 4_500);
        let fast = Clock {
            timeout_turn: 100,
            ..Clock::default()
        };
        assert_eq!(soft(&fast, NO_TIME_CAP), 70);
        assert!(ms(fast.budget(NO_TIME_CAP).1) < 100);
    }

    #[test]
    fn match_clock_is_shared_over_the_moves_to_go() {
        let clock = Clock {
            timeout_turn: 30_000,
            timeout_match: 180_000,
            time_left: Some(60_000),
        };
        let (budget, hard) = clock.budget(NO_TIME_CAP);
        assert_eq!(ms(budget.optimum), 60_000 / time::MOVES_TO_GO);
        // An unstable answer may take up to a tenth of what is left; the watchdog allows that.
        assert_eq!(budget.maximum.map(ms), Some(60_000 / time::MAX_SHARE));
        assert!(ms(hard) > 6_000 && ms(hard) < 6_200, "{hard:?}");
        let nearly_out = Clock {
            time_left: Some(20),
            ..clock
        };
        assert_eq!(soft(&nearly_out, NO_TIME_CAP), 1);
        assert_eq!(nearly_out.budget(NO_TIME_CAP).0.maximum.map(ms), Some(1));
    }

    #[test]
    fn the_level_time_caps_the_budget() {
        let clock = Clock {
            timeout_turn: 5_000,
            ..Clock::default()
        };
        let (budget, hard) = clock.budget(Duration::from_millis(200));
        assert_eq!(ms(budget.optimum), 200);
        assert!(ms(hard) > 200 && ms(hard) < 300, "{hard:?}");
        // The protocol's clock wins when it is the smaller.
        assert_eq!(soft(&clock, Duration::from_millis(9_000)), 4_500);
    }

    fn options(args: &[&str]) -> Result<Options, clap::Error> {
        let cli = Cli::try_parse_from(std::iter::once(&"pbrain-caro").chain(args))?;
        assert!(cli.mode.is_none(), "{args:?}");
        Ok(cli.level.options())
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let mode = |args: &[&str]| Cli::try_parse_from(args).map(|c| c.mode);
        assert!(matches!(
            mode(&["pbrain-caro", "classic"]),
            Ok(Some(Mode::Classic {
                depth: CLASSIC_DEPTH
            }))
        ));
        assert!(matches!(
            mode(&["pbrain-caro", "bench", "2"]),
            Ok(Some(Mode::Bench {
                depth: 2,
                threads: 1,
                ..
            }))
        ));
        assert!(matches!(
            mode(&["pbrain-caro", "bench", "12", "2"]),
            Ok(Some(Mode::Bench {
                depth: 12,
                threads: 2,
                ..
            }))
        ));
        // The bench takes the tuning flags after its own arguments.
        match mode(&["pbrain-caro", "bench", "6", "--search", "lmr_k=0.5"]) {
            Ok(Some(Mode::Bench {
                depth: 6,
                threads: 1,
                tuning,
            })) => assert_eq!(tuning.search, [("lmr_k".to_string(), 0.5)]),
            other => panic!("{other:?}"),
        }
        // A level's numbers, with a flag over them.
        match mode(&[
            "pbrain-caro",
            "bench",
            "--level-numbers",
            "--search",
            "lmr_k=0.5",
        ]) {
            Ok(Some(Mode::Bench { tuning, .. })) => assert_eq!(
                tuning.tuning().search,
                SearchParams {
                    lmr_k: 0.5,
                    ..bot::level_params()
                }
            ),
            other => panic!("{other:?}"),
        }
        for bad in [
            &["pbrain-caro", "bench", "zero"][..],
            &["pbrain-caro", "classic", "0"],
            &["pbrain-caro", "classic", "2", "3"],
            &["pbrain-caro", "bench", "10", "0"],
            &["pbrain-caro", "bench", "10", "65"],
            &["pbrain-caro", "--depth", "3", "classic"],
            &["pbrain-caro", "help"],
        ] {
            assert!(mode(bad).is_err(), "{bad:?}");
        }
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
                search: SearchParams::default(),
            }
        );
        assert_eq!((o.seed, o.nodes), (9, None));
        let o = options(&["--nodes", "60000"]).unwrap();
        assert_eq!((o.nodes, o.level.max_depth), (Some(60_000), FULL_DEPTH));
        assert_eq!(o.threads, 1);
        assert_eq!(options(&["--threads", "2"]).unwrap().threads, 2);
        // A server level without `learnt_ordering`, as scripts/ladder plays it.
        let o = options(&["--depth", "5", "--level-numbers"]).unwrap();
        assert_eq!(o.level.search, bot::level_params());
        assert_ne!(o.level.search, SearchParams::default());
        let o = options(&["--depth", "6", "--seed", "2", "--depth=3"]).unwrap();
        assert_eq!((o.level.max_depth, o.seed), (3, 2), "the last value wins");
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
            &["--nodes", "0"],
            &["--threads", "0"],
            &["--threads", "65"],
            &["--level", "strong"],
            &["7"],
        ] {
            assert!(options(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn thread_num_is_clamped_to_the_machine() {
        assert_eq!(thread_count(0, 8), 1);
        assert_eq!(thread_count(1, 8), 1);
        assert_eq!(thread_count(4, 8), 4);
        assert_eq!(thread_count(16, 8), 8);
        assert_eq!(thread_count(u64::MAX, 256), MAX_THREADS);
        assert_eq!(thread_count(3, 0), 1);
    }

    #[test]
    fn zero_turn_time_means_fast() {
        let clock = Clock {
            timeout_turn: 0,
            ..Clock::default()
        };
        assert_eq!(soft(&clock, NO_TIME_CAP), time::FASTEST_MS);
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
