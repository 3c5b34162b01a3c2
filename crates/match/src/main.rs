//! `caro-match`: plays two Gomocup engines against each other (`caro-match play`), generates
//! balanced openings with our engine (`caro-match openings`), keeps the ones an outside engine
//! judges balanced (`caro-match judge`), fits joint Elo ratings to the games of several
//! matches (`caro-match rate`), scores the games of a stopped match (`caro-match score`), or
//! tunes our engine's numbers by play against another engine (`caro-match spsa`). See
//! `docs/match.md`.

use std::fmt;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use caro_engine::search::params::SearchParams;
use caro_engine::search::weights::Weights;
use caro_engine::spsa::{self, Space};
use caro_engine::{Rule, Rules};
use caro_match::judge::{judge_all, JudgeSettings};
use caro_match::openings::{generate, parse_openings, GenerateSettings, Opening, Playout};
use caro_match::process::split_command;
use caro_match::rating::{fit, Crosstable, Prior, RatedGame};
use caro_match::referee::{GameSettings, Logger};
use caro_match::runner::{run_match, EngineSpec, MatchConfig};
use caro_match::score::{read_games_text, score, GamesFile};
use caro_match::stats::Sprt;
use caro_match::tune::{run_tune, weights_text, TuneConfig};
use clap::{value_parser, Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "caro-match",
    version,
    about = "A match runner for Gomocup (pbrain) engines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a match between two engines.
    Play(Box<PlayArgs>),
    /// Generate balanced openings near the centre, checked by our search and optionally by
    /// self-play playouts the colour must not decide; prints them.
    Openings(OpeningsArgs),
    /// Ask an outside engine for its evaluation of candidate openings and print the first ones
    /// it judges balanced, as a book.
    Judge(JudgeArgs),
    /// Fit joint Elo ratings to the games of one or more matches (games.jsonl files).
    Rate(RateArgs),
    /// Score the games of a match (games.jsonl, gzipped or not) as the runner would have: for a
    /// match stopped before it wrote summary.json.
    Score(ScoreArgs),
    /// Tune pbrain-caro's evaluation weights or search numbers by play against another engine
    /// (SPSA: each step, two perturbed sets play an opening with both colours against it).
    Spsa(Box<SpsaArgs>),
}

/// Board and rule, shared by the commands.
#[derive(Args)]
struct BoardArgs {
    /// Rule: freestyle, exact_five, caro, caro_overline, caro_gomocup (rule 8 as the Gomocup
    /// referee scores it).
    #[arg(long, default_value = "caro")]
    rule: Rule,
    /// Board size (square).
    #[arg(long, default_value_t = 15)]
    size: u8,
    /// Board width, for a rectangular board (overrides --size).
    #[arg(long)]
    width: Option<u8>,
    /// Board height, for a rectangular board (overrides --size).
    #[arg(long)]
    height: Option<u8>,
}

impl BoardArgs {
    fn rules(&self) -> Result<Rules> {
        let (w, h) = (
            self.width.unwrap_or(self.size),
            self.height.unwrap_or(self.size),
        );
        Rules::caro(w, h, self.rule).context("board size")
    }
}

#[derive(Args)]
struct PlayArgs {
    /// Engine 1's command line (the engine the score is counted for).
    #[arg(long)]
    engine1: String,
    /// Engine 2's command line.
    #[arg(long)]
    engine2: String,
    /// Engine 1's name in records (default: its command line).
    #[arg(long)]
    name1: Option<String>,
    /// Engine 2's name in records (default: its command line).
    #[arg(long)]
    name2: Option<String>,
    #[command(flatten)]
    board: BoardArgs,
    #[command(flatten)]
    clock: ClockArgs,
    /// Number of games (each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 2)]
    games: usize,
    /// Opening file (move lists like `h8 i9 j8` or centre offsets like `0,0 1,1 -1,1`).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Games played in parallel.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Seed of the opening order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory (created).
    #[arg(long, default_value = "match-out")]
    out: PathBuf,
    /// SPRT: elo0,elo1,alpha,beta (logistic Elo); stops when a bound is crossed.
    #[arg(long)]
    sprt: Option<Sprt>,
    /// Echo the protocol log on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// No per-game progress lines.
    #[arg(long, short)]
    quiet: bool,
}

/// The clocks and protocol settings of every game, shared by `play` and `spsa`.
#[derive(Args)]
struct ClockArgs {
    /// Time per move in milliseconds (INFO timeout_turn); 0 = no per-move limit.
    #[arg(long, default_value_t = 1000)]
    turn_ms: u64,
    /// Time per engine per game in milliseconds (INFO timeout_match, time_left); 0 = none.
    #[arg(long, default_value_t = 0)]
    match_ms: u64,
    /// Extra milliseconds an answer may take before it forfeits.
    #[arg(long, default_value_t = 100)]
    tolerance_ms: u64,
    /// Pause in milliseconds before each request to an engine (START, each move request).
    #[arg(long, default_value_t = 15)]
    delay_ms: u64,
    /// Milliseconds an engine may take to answer START (start-up included).
    #[arg(long, default_value_t = 10_000)]
    start_timeout_ms: u64,
    /// INFO max_memory in bytes (not sent unless given).
    #[arg(long)]
    max_memory: Option<u64>,
}

impl ClockArgs {
    fn settings(&self, rules: Rules) -> GameSettings {
        GameSettings {
            rules,
            turn_ms: self.turn_ms,
            match_ms: self.match_ms,
            tolerance: Duration::from_millis(self.tolerance_ms),
            delay: Duration::from_millis(self.delay_ms),
            start_timeout: Duration::from_millis(self.start_timeout_ms),
            max_memory: self.max_memory,
        }
    }
}

#[derive(Args)]
struct SpsaArgs {
    /// Our engine's command line: pbrain-caro, to which each step adds --weights FILE and
    /// --search NAME=VALUE flags.
    #[arg(long)]
    engine: String,
    /// The opponent's command line.
    #[arg(long)]
    opponent: String,
    /// The opponent's name in the records (default: its command line).
    #[arg(long)]
    opponent_name: Option<String>,
    #[command(flatten)]
    board: BoardArgs,
    #[command(flatten)]
    clock: ClockArgs,
    /// Opening file: each step plays one of them, drawn from the seed.
    #[arg(long)]
    openings: PathBuf,
    /// What is tuned: eval (the evaluation's weights), plus (its cross-line terms alone),
    /// search (the search's numbers) or both (eval and search).
    #[arg(long, default_value = "eval", value_parser = space)]
    space: Space,
    /// Steps (each four games: two perturbed sets, each with both colours): the schedule's
    /// length.
    #[arg(long, default_value_t = 1000, value_parser = value_parser!(u64).range(1..))]
    steps: u64,
    /// Learning rate of the last step (caro_engine::spsa).
    #[arg(long, default_value_t = 0.005)]
    r_end: f64,
    /// Seed of the perturbations and the openings drawn.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Steps played at the same time.
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u64).range(1..))]
    concurrency: u64,
    /// Write the current numbers every this many steps (and at the end).
    #[arg(long, default_value_t = 10, value_parser = value_parser!(u64).range(1..))]
    save_every: u64,
    /// Start from the weights of this file instead of the built-in ones (a weights.txt, e.g.
    /// an earlier run's).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Start from the search numbers of this file instead of the defaults: NAME=VALUE lines,
    /// as an earlier run's search.txt.
    #[arg(long)]
    search: Option<PathBuf>,
    /// Output directory (created).
    #[arg(long, default_value = "spsa-out")]
    out: PathBuf,
    /// Go on with the stopped run in --out, given the same arguments: its steps.jsonl is
    /// replayed (and checked) and the steps it lacks are played.
    #[arg(long)]
    resume: bool,
    /// Echo the protocol log on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// No per-step progress lines.
    #[arg(long, short)]
    quiet: bool,
}

fn space(name: &str) -> Result<Space, String> {
    Space::named(name).ok_or_else(|| format!("{name:?} is not eval, plus, search or both"))
}

#[derive(Args)]
struct OpeningsArgs {
    #[command(flatten)]
    board: BoardArgs,
    /// Openings to keep.
    #[arg(long, default_value_t = 40)]
    count: usize,
    /// Fewest stones.
    #[arg(long, default_value_t = 3)]
    min_stones: usize,
    /// Most stones.
    #[arg(long, default_value_t = 6)]
    max_stones: usize,
    /// Stones within this distance (Chebyshev) of the centre.
    #[arg(long, default_value_t = 3)]
    radius: u8,
    /// Search depth of the balance check.
    #[arg(long, default_value_t = 8)]
    depth: u8,
    /// Time cap of each check in milliseconds; 0 = none (then give --nodes or the depth alone
    /// bounds the check).
    #[arg(long, default_value_t = 300)]
    time_ms: u64,
    /// Node budget of each check (deterministic, unlike the time cap: with --time-ms 0 the
    /// output depends on the arguments alone).
    #[arg(long)]
    nodes: Option<u64>,
    /// A playout pair A/B (node budgets a move, e.g. 30000/40000) every kept opening must pass:
    /// two self-play games, each budget playing X once, must end differently for X, so that
    /// the colour does not decide. Repeat for more pairs; they are played in order.
    #[arg(long = "playout", value_name = "A/B")]
    playouts: Vec<Playout>,
    /// Keep openings whose score for the side to move is within +-window.
    #[arg(long, default_value_t = 200)]
    window: i32,
    /// Seed of the random placement.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct JudgeArgs {
    /// Candidate openings (an opening file: the output of `caro-match openings`, say).
    candidates: PathBuf,
    /// The judge's command line: a Gomocup engine that reports its evaluation in `MESSAGE`
    /// lines as `Eval N` for the side to move, as Rapfi does.
    #[arg(long)]
    engine: String,
    #[command(flatten)]
    board: BoardArgs,
    /// Thinking time on each opening in milliseconds (INFO timeout_turn).
    #[arg(long, default_value_t = 2000)]
    turn_ms: u64,
    /// Extra milliseconds the engine's move may take before the run stops with an error.
    #[arg(long, default_value_t = 1000)]
    tolerance_ms: u64,
    /// Keep openings whose evaluation for X is within +-within.
    #[arg(long, default_value_t = 100)]
    within: i64,
    /// Openings to keep: the first ones within the window, in the candidates' order.
    #[arg(long, default_value_t = 40)]
    count: usize,
    /// Engines running at the same time.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Echo the protocol log on stderr.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(Args)]
struct RateArgs {
    /// `games.jsonl` files written by `caro-match play` (or gzipped), or their output
    /// directories.
    #[arg(required = true)]
    games: Vec<PathBuf>,
    /// The engine whose rating is fixed at 0.
    #[arg(long, default_value = "classic")]
    anchor: String,
    /// Virtual draws of each engine against the anchor: `auto` adds 1 only when some engine
    /// won or lost everything (the ratings would be infinite), a number always adds that many.
    #[arg(long, default_value = "auto")]
    prior: Prior,
    /// Print the ratings as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ScoreArgs {
    /// `games.jsonl` files written by `caro-match play` (or gzipped), or their output
    /// directories; the pairs of each file are its own.
    #[arg(required = true)]
    games: Vec<PathBuf>,
    /// The engine the score is counted for (default: engine 1 of the first game).
    #[arg(long)]
    engine: Option<String>,
    /// SPRT: elo0,elo1,alpha,beta (logistic Elo): the LLR and the decision the runner would
    /// have reached after these games.
    #[arg(long)]
    sprt: Option<Sprt>,
    /// Print the score as JSON (the fields of summary.json, the files, the unpaired games).
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Play(args) => play(*args),
        Command::Openings(args) => openings(args),
        Command::Judge(args) => judge(args),
        Command::Rate(args) => rate(args),
        Command::Score(args) => score_games(args),
        Command::Spsa(args) => tune(*args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`caro-match score ... | head`): there is no one
        // left to tell, and nothing went wrong on our side; `cat` and `grep` end quietly too.
        Err(e)
            if e.downcast_ref::<io::Error>().map(io::Error::kind)
                == Some(io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // As `fn main() -> anyhow::Result<()>` reports it.
            eprintln!("Error: {e:?}");
            ExitCode::FAILURE
        }
    }
}

/// Writes to standard output, returning the error that `print!` would panic on (a reader
/// that went away: `main` then ends quietly).
fn emit(text: fmt::Arguments) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_fmt(text)?;
    stdout.flush()
}

/// A progress line of a match or a tuning run. One that cannot be written is dropped: the run
/// goes on to its end, because its files, not its standard output, are its record, and a
/// stopped pager should not cut a match short (Ctrl-C does; then the final report is not
/// written either).
fn progress_line(line: fmt::Arguments) {
    let _ = emit(format_args!("{line}\n"));
}

fn score_games(args: ScoreArgs) -> Result<()> {
    let files = args
        .games
        .iter()
        .map(|path| GamesFile::read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let score = score(&files, args.engine.as_deref(), args.sprt)?;
    if args.json {
        emit(format_args!(
            "{}\n",
            serde_json::to_string_pretty(&score).expect("the score serializes")
        ))?;
    } else {
        emit(format_args!("{}", score.report()))?;
    }
    Ok(())
}

fn rate(args: RateArgs) -> Result<()> {
    let mut games = Vec::new();
    let mut files = Vec::new();
    for path in &args.games {
        let (file, text) = read_games_text(path)?;
        games.extend(
            RatedGame::parse_jsonl(&text).with_context(|| format!("reading {}", file.display()))?,
        );
        files.push(file.display().to_string());
    }
    let ratings = fit(&Crosstable::from_games(&games), &args.anchor, args.prior)?;
    if args.json {
        /// The ratings and where their games came from.
        #[derive(serde::Serialize)]
        struct Output<'a> {
            files: &'a [String],
            #[serde(flatten)]
            ratings: &'a caro_match::rating::Ratings,
        }
        let output = Output {
            files: &files,
            ratings: &ratings,
        };
        emit(format_args!(
            "{}\n",
            serde_json::to_string_pretty(&output).expect("ratings serialize")
        ))?;
    } else {
        emit(format_args!("{}", ratings.report()))?;
    }
    Ok(())
}

fn play(args: PlayArgs) -> Result<()> {
    let rules = args.board.rules()?;
    let openings = match &args.openings {
        Some(path) => read_openings(path, rules)?,
        None => Vec::<Opening>::new(),
    };
    let spec = |command: &str, name: &Option<String>| EngineSpec {
        name: name.clone().unwrap_or_else(|| command.to_string()),
        command: command.to_string(),
    };
    let mut engines = [
        spec(&args.engine1, &args.name1),
        spec(&args.engine2, &args.name2),
    ];
    if engines[0].name == engines[1].name {
        // Records and the summary must tell them apart.
        engines[0].name.push_str(" (1)");
        engines[1].name.push_str(" (2)");
    }
    let config = MatchConfig {
        engines,
        game: args.clock.settings(rules),
        games: args.games,
        openings,
        concurrency: args.concurrency,
        seed: args.seed,
        out_dir: args.out.clone(),
        sprt: args.sprt,
        verbose: args.verbose,
    };
    let quiet = args.quiet;
    let summary = run_match(&config, |record, summary| {
        if !quiet {
            let llr = summary
                .sprt
                .as_ref()
                .map(|s| format!(" LLR {:.2}", s.llr))
                .unwrap_or_default();
            progress_line(format_args!(
                "game {:>4}: {} (x) vs {} (o) {} {} [{}] | {}: +{} ={} -{}{llr}",
                record.game,
                record.x,
                record.o,
                record.result,
                record.reason.as_str(),
                record.opening,
                summary.engines[0],
                summary.total.wins,
                summary.total.draws,
                summary.total.losses,
            ));
        }
    })?;
    emit(format_args!(
        "{}output: {}\n",
        summary.report(),
        args.out.display()
    ))?;
    Ok(())
}

/// The search numbers of a `search.txt` (`NAME=VALUE` lines; `#` comments and blank lines
/// skipped), over the defaults.
fn read_search(path: &Path) -> Result<SearchParams> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut sp = SearchParams::default();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match spsa::parse_search_word(line) {
            Ok((name, value)) => {
                spsa::set_search(&mut sp, name, value);
            }
            Err(e) => bail!(
                "{}:{}: {line:?} is not NAME=VALUE with a known name and a number: {e}",
                path.display(),
                n + 1
            ),
        }
    }
    Ok(sp)
}

fn tune(args: SpsaArgs) -> Result<()> {
    let rules = args.board.rules()?;
    let openings = read_openings(&args.openings, rules)?;
    let weights = match &args.weights {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Weights::parse(&text).with_context(|| format!("reading {}", path.display()))?
        }
        None => *Weights::built(),
    };
    let search = match &args.search {
        Some(path) => read_search(path)?,
        None => SearchParams::default(),
    };
    let opponent = EngineSpec {
        name: args
            .opponent_name
            .clone()
            .unwrap_or_else(|| args.opponent.clone()),
        command: args.opponent.clone(),
    };
    let config = TuneConfig {
        engine: args.engine.clone(),
        opponent,
        game: args.clock.settings(rules),
        openings,
        space: args.space,
        start: (weights, search),
        steps: args.steps,
        r_end: args.r_end,
        seed: args.seed,
        concurrency: args.concurrency as usize,
        save_every: args.save_every,
        out_dir: args.out.clone(),
        verbose: args.verbose,
        resume: args.resume,
    };
    let names: Vec<String> = args
        .space
        .params(&weights, &search, args.r_end)
        .into_iter()
        .map(|p| p.name)
        .collect();
    let quiet = args.quiet;
    let (w, sp) = run_tune(&config, |record, tally| {
        if !quiet {
            let values: Vec<String> = names
                .iter()
                .zip(&record.values)
                .map(|(name, v)| format!("{name}={v:.1}"))
                .collect();
            progress_line(format_args!(
                "step {:>5}: {:+} [{}] | our score {:.1}/{} ({:.1}%), + minus - {:+} | {}",
                record.step,
                record.result,
                record.opening,
                tally.points,
                tally.games,
                100.0 * tally.points / tally.games.max(1) as f64,
                tally.plus_minus,
                values.join(" ")
            ));
        }
    })?;
    emit(format_args!(
        "{}search {}\noutput: {}\n",
        weights_text(&w, "final weights"),
        spsa::search_text(&sp).join(" "),
        args.out.display()
    ))?;
    Ok(())
}

/// The openings of the file at `path`, at least one.
fn read_openings(path: &Path, rules: Rules) -> Result<Vec<Opening>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let openings =
        parse_openings(&text, rules).with_context(|| format!("reading {}", path.display()))?;
    if openings.is_empty() {
        bail!("{} holds no opening", path.display());
    }
    Ok(openings)
}

fn judge(args: JudgeArgs) -> Result<()> {
    let rules = args.board.rules()?;
    if args.jobs == 0 {
        bail!("need --jobs >= 1");
    }
    let openings = read_openings(&args.candidates, rules)?;
    // The header names the engine without the program's directory: the book is a record read
    // on other machines, where that path means nothing.
    let mut words = split_command(&args.engine)?;
    if let Some(file) = Path::new(&words[0]).file_name() {
        words[0] = file.to_string_lossy().into_owned();
    }
    let mut engine = words.join(" ");
    if engine.contains(char::is_whitespace) {
        engine = format!("\"{engine}\"");
    }
    let settings = JudgeSettings {
        engine: args.engine.clone(),
        rules,
        turn_ms: args.turn_ms,
        tolerance: Duration::from_millis(args.tolerance_ms),
    };
    let log = Logger::new(None, args.verbose);
    let values = judge_all(&settings, &openings, args.jobs, &log)?;
    let kept: Vec<(&Opening, i64)> = openings
        .iter()
        .zip(values.iter().copied())
        .filter(|(_, value)| value.abs() <= args.within)
        .take(args.count)
        .collect();
    emit(format_args!(
        "# caro-match judge {} --engine {engine} --rule {} --width {} --height {} --turn-ms {} \
         --within {} --count {}: {} of {} kept\n",
        args.candidates.display(),
        rules.rule(),
        rules.width(),
        rules.height(),
        args.turn_ms,
        args.within,
        args.count,
        kept.len(),
        openings.len()
    ))?;
    emit(format_args!(
        "# Each line: moves from the empty board, X first; then the judge's evaluation for X.\n"
    ))?;
    for (opening, value) in &kept {
        emit(format_args!(
            "{}  # judge {value:+}\n",
            opening.to_squares()
        ))?;
    }
    // Every evaluation, in the candidates' order, for the record of how many were within.
    let all: Vec<String> = values.iter().map(i64::to_string).collect();
    eprintln!("judged {}: {}", openings.len(), all.join(" "));
    Ok(())
}

fn openings(args: OpeningsArgs) -> Result<()> {
    let rules = args.board.rules()?;
    if args.min_stones == 0 || args.min_stones > args.max_stones {
        bail!("need 1 <= --min-stones <= --max-stones");
    }
    let settings = GenerateSettings {
        rules,
        count: args.count,
        min_stones: args.min_stones,
        max_stones: args.max_stones,
        radius: args.radius,
        depth: args.depth,
        time: (args.time_ms > 0).then(|| Duration::from_millis(args.time_ms)),
        nodes: args.nodes,
        playouts: args.playouts.clone(),
        window: args.window,
        seed: args.seed,
        max_tries: args.count * 200,
    };
    if settings.time.is_none() && settings.nodes.is_none() && settings.depth > 12 {
        bail!("--time-ms 0 with no --nodes: the check is bounded by --depth alone, give --nodes");
    }
    // The exact command, so that the file says how to regenerate it. Options added later are
    // written only when given, so the first lines of older files still read as they did.
    let mut command = format!(
        "# caro-match openings --rule {} --width {} --height {} --count {} --min-stones {} \
         --max-stones {} --radius {} --depth {} --time-ms {} --window {} --seed {}",
        rules.rule(),
        rules.width(),
        rules.height(),
        args.count,
        args.min_stones,
        args.max_stones,
        args.radius,
        args.depth,
        args.time_ms,
        args.window,
        args.seed
    );
    if let Some(nodes) = args.nodes {
        command.push_str(&format!(" --nodes {nodes}"));
    }
    for p in &args.playouts {
        command.push_str(&format!(" --playout {p}"));
    }
    emit(format_args!("{command}\n"))?;
    if args.playouts.is_empty() {
        emit(format_args!(
            "# Each line: moves from the empty board, X first; then the search's verdict.\n"
        ))?;
    } else {
        emit(format_args!(
            "# Each line: moves from the empty board, X first; then the search's verdict and X's \
             playout results (1 won, = drawn, 0 lost), two a pair, A as X first.\n"
        ))?;
    }
    // Printed as they are kept: a long run that is stopped still leaves a usable prefix, and
    // one whose reader went away (`| head`) stops there.
    let mut written = Ok(());
    let (kept, tally) = generate(&settings, &mut |g| {
        let mut line = format!(
            "{}  # score {:+} depth {} (side to move)",
            g.opening.to_squares(),
            g.score,
            g.depth
        );
        if !g.playouts.is_empty() {
            let results: String = g
                .playouts
                .iter()
                .map(|&r| {
                    if r == 1.0 {
                        '1'
                    } else if r == 0.0 {
                        '0'
                    } else {
                        '='
                    }
                })
                .collect();
            line.push_str(&format!(" playouts {results}"));
        }
        written = emit(format_args!("{line}\n"));
        if written.is_ok() {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    });
    written?;
    // On stderr, so that the file is exactly what `--count` of its first line prints.
    eprintln!(
        "{} candidates, {} searched, {} within the window, {} of those rejected by a playout \
         pair the colour decided, {} kept",
        tally.candidates,
        tally.searched,
        tally.balanced,
        tally.colour_decided,
        kept.len()
    );
    if kept.len() < args.count {
        eprintln!(
            "only {} of {} openings found; widen --window or --radius",
            kept.len(),
            args.count
        );
    }
    Ok(())
}
