//! The referee: plays one game between two engines over the Gomocup protocol
//! (<https://plastovicka.github.io/protocl2en.htm>) and judges it with [`caro_engine::Board`].
//!
//! Per game each engine gets `START n` (or `RECTSTART w,h`) and must answer `OK`, then the
//! `INFO` lines (`timeout_turn`, `timeout_match`, `max_memory`, `rule`, `game_type`). The first
//! time an engine is asked to move it gets the position: `BEGIN` on an empty board, otherwise
//! `BOARD` with every stone so far (field 1 = its own, 2 = the opponent's) and `DONE`; after that
//! `TURN x,y` with the opponent's last move. With a match clock, `INFO time_left` comes before
//! each request, as protocol 2 asks.
//!
//! An engine that misbehaves loses the game, never the match: an illegal move, an `ERROR`
//! answer, garbage, a closed stdout (crash) or an answer later than its time plus the tolerance.
//! Lines starting with `MESSAGE`, `DEBUG` or `UNKNOWN` are logged and are not answers. A
//! misbehaving engine's process is killed: it may still be thinking or may answer late, and a
//! late line must never be read as the answer to the next game's command. [`Slot`] respawns it
//! for the next game.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::thread;
use std::time::{Duration, Instant};

use caro_engine::{Board, Move, Player, Rules, Status};
use caro_gomocup::{AnswerError, Command, Info, Reply};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::openings::Opening;
use crate::process::{EngineProcess, Received};

/// The longest wait for an answer when neither a turn nor a match time limit is set.
const NO_LIMIT_WAIT: Duration = Duration::from_secs(3600);
/// How long an engine may take to exit after `END` before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);

/// The protocol and time settings of every game in a match.
#[derive(Clone, Copy, Debug)]
pub struct GameSettings {
    /// Rule and board size.
    pub rules: Rules,
    /// `INFO timeout_turn`, milliseconds; 0 = no per-move limit ("play fast" in the protocol).
    pub turn_ms: u64,
    /// `INFO timeout_match`, milliseconds per engine per game; 0 = no match clock.
    pub match_ms: u64,
    /// Extra time an answer may take before it forfeits (pipes, process switching).
    pub tolerance: Duration,
    /// Pause before each request (`START`, each move request): some engines drop a command
    /// that arrives right after they wrote their move.
    pub delay: Duration,
    /// How long an engine may take to answer `START` (its start-up included).
    pub start_timeout: Duration,
    /// `INFO max_memory` in bytes, if set.
    pub max_memory: Option<u64>,
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A winning line under the rule.
    Five,
    /// The board is full: a draw.
    BoardFull,
    /// The loser played off the board or on a taken cell.
    IllegalMove,
    /// The loser's process exited or closed its stdout.
    Crash,
    /// The loser answered too late.
    TimeForfeit,
    /// The loser answered something that is not a move.
    Garbage,
    /// The loser answered `ERROR`.
    EngineError,
    /// The loser could not be started or did not accept the game (`START`).
    StartFailed,
}

impl Reason {
    /// The snake_case name, as in the JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Five => "five",
            Reason::BoardFull => "board_full",
            Reason::IllegalMove => "illegal_move",
            Reason::Crash => "crash",
            Reason::TimeForfeit => "time_forfeit",
            Reason::Garbage => "garbage",
            Reason::EngineError => "engine_error",
            Reason::StartFailed => "start_failed",
        }
    }
}

/// An engine's misbehaviour: the game is lost (or, for [`crate::judge`], the opening cannot be
/// judged).
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    pub(crate) reason: Reason,
    pub(crate) detail: String,
}

fn fault(reason: Reason, detail: impl Into<String>) -> Fault {
    Fault {
        reason,
        detail: detail.into(),
    }
}

/// How a game went.
#[derive(Clone, Debug)]
pub struct GameOutcome {
    /// The winner; `None` for a draw.
    pub winner: Option<Player>,
    /// Why it ended.
    pub reason: Reason,
    /// Details for the log (the offending line, the time taken, ...).
    pub detail: String,
    /// Every move from the empty board, opening included, with thinking times (0 for opening
    /// stones).
    pub moves: Vec<(Move, u64)>,
}

/// A shared log file (and optionally stderr) for protocol traffic and verdicts.
pub struct Logger {
    file: Option<Mutex<BufWriter<File>>>,
    echo: bool,
}

impl Logger {
    /// Logs to `file` if given, and to stderr if `echo`.
    pub fn new(file: Option<File>, echo: bool) -> Logger {
        Logger {
            file: file.map(|f| Mutex::new(BufWriter::new(f))),
            echo,
        }
    }
    /// A logger that drops everything.
    pub fn silent() -> Logger {
        Logger::new(None, false)
    }
    /// Writes one line.
    pub fn log(&self, line: &str) {
        if let Some(file) = &self.file {
            let mut f = file.lock();
            let _ = writeln!(f, "{line}");
        }
        if self.echo {
            eprintln!("{line}");
        }
    }
    /// Flushes the file.
    pub fn flush(&self) {
        if let Some(file) = &self.file {
            let _ = file.lock().flush();
        }
    }
}

/// One seat of a worker: an engine's command line and its process, if running.
pub struct Slot {
    /// Display name.
    pub name: String,
    /// Command line.
    pub command: String,
    process: Option<EngineProcess>,
    /// Whether a process of this slot has been lost (killed after a fault), so the next spawn is
    /// a restart.
    lost: bool,
}

impl Slot {
    /// A slot that starts `command` when first needed.
    pub fn new(name: &str, command: &str) -> Slot {
        Slot {
            name: name.to_string(),
            command: command.to_string(),
            process: None,
            lost: false,
        }
    }

    /// Makes sure a process runs; `Ok(true)` if it was restarted after a lost one.
    pub(crate) fn ensure(&mut self, log: &Logger, tag: &str) -> Result<bool, Fault> {
        if let Some(p) = &mut self.process {
            if !p.has_exited() {
                return Ok(false);
            }
            log.log(&format!("{tag} {}: process has exited", self.name));
            self.process = None;
            self.lost = true;
        }
        let restarted = std::mem::take(&mut self.lost);
        if restarted {
            log.log(&format!("{tag} {}: restarting the engine", self.name));
        }
        match EngineProcess::spawn(&self.command) {
            Ok(p) => {
                self.process = Some(p);
                Ok(restarted)
            }
            Err(e) => {
                self.lost = true;
                Err(fault(Reason::StartFailed, e.to_string()))
            }
        }
    }

    /// Kills the process after a fault; the next game respawns it.
    pub(crate) fn discard(&mut self) {
        if let Some(p) = self.process.take() {
            p.kill();
            self.lost = true;
        }
    }

    /// Ends the process at the end of the match: `END`, then a kill if it lingers.
    pub fn quit(&mut self) {
        if let Some(p) = self.process.take() {
            p.quit(QUIT_GRACE);
        }
    }

    fn process(&mut self) -> &mut EngineProcess {
        self.process.as_mut().expect("ensure() was called")
    }

    /// Sends `line` (logged).
    pub(crate) fn send(&mut self, line: &str, log: &Logger, tag: &str) -> Result<(), Fault> {
        log.log(&format!("{tag} {} < {line}", self.name));
        self.process()
            .send(line)
            .map_err(|e| fault(Reason::Crash, e.to_string()))
    }

    /// Logs and drops lines left over from before (late informational output).
    fn drain(&mut self, log: &Logger, tag: &str) {
        for line in self.process().drain() {
            log.log(&format!("{tag} {} > {line} (unrequested)", self.name));
        }
    }

    /// Waits until `deadline` for an answer that is not informational.
    fn answer(&mut self, deadline: Instant, log: &Logger, tag: &str) -> Result<String, Received> {
        self.answer_with(deadline, log, tag, &mut |_| {})
    }

    /// [`Slot::answer`], showing each informational line before the answer to `on_info` (the
    /// judge reads evaluations from `MESSAGE` lines).
    pub(crate) fn answer_with(
        &mut self,
        deadline: Instant,
        log: &Logger,
        tag: &str,
        on_info: &mut dyn FnMut(&str),
    ) -> Result<String, Received> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.process().recv(left) {
                Received::Line(line) => {
                    log.log(&format!("{tag} {} > {line}", self.name));
                    if caro_gomocup::is_informational(&line) {
                        on_info(&line);
                        continue;
                    }
                    return Ok(line.trim().to_string());
                }
                other => return Err(other),
            }
        }
    }
}

/// Whether each slot was restarted for this game.
pub type Restarted = [bool; 2];

/// Plays one game from `opening`: `slots[x_slot]` plays X (first), the other O. Faults end the
/// game as a loss for the culprit and discard its process.
pub fn play_game(
    settings: &GameSettings,
    slots: &mut [Slot; 2],
    x_slot: usize,
    opening: &Opening,
    log: &Logger,
    tag: &str,
) -> (GameOutcome, Restarted) {
    let mut board =
        Board::from_moves(settings.rules, &opening.moves).expect("openings are validated");
    let mut moves: Vec<(Move, u64)> = opening.moves.iter().map(|&m| (m, 0)).collect();
    let seat = |slot: usize| if slot == x_slot { Player::X } else { Player::O };
    let mut restarted = [false; 2];

    let lose = |slots: &mut [Slot; 2], slot: usize, f: Fault, moves: Vec<(Move, u64)>| {
        log.log(&format!(
            "{tag} {} ({}) loses: {} ({})",
            slots[slot].name,
            seat(slot),
            f.reason.as_str(),
            f.detail
        ));
        slots[slot].discard();
        GameOutcome {
            winner: Some(seat(slot).opponent()),
            reason: f.reason,
            detail: f.detail,
            moves,
        }
    };

    for slot in [x_slot, 1 - x_slot] {
        match slots[slot].ensure(log, tag).and_then(|r| {
            restarted[slot] = r;
            start(settings, &mut slots[slot], log, tag)
        }) {
            Ok(()) => {}
            Err(f) => return (lose(slots, slot, f, moves), restarted),
        }
    }

    let mut informed = [false; 2];
    let mut time_left = [settings.match_ms as i64; 2];
    let tolerance = settings.tolerance.as_millis() as i64;
    loop {
        let side = board.to_move();
        let slot = if side == Player::X {
            x_slot
        } else {
            1 - x_slot
        };
        let mut commands = Vec::new();
        if settings.match_ms > 0 {
            commands.push(Command::Info(Info::TimeLeft(time_left[slot])).to_string());
        }
        if !informed[slot] {
            informed[slot] = true;
            commands.extend(caro_gomocup::position_commands(&board));
        } else {
            let last = board.last_move().expect("the opponent has moved");
            commands.push(Command::turn(last).to_string());
        }

        // The answer is due within the turn time and within what is left of the match clock.
        let mut limit_ms: Option<i64> = None;
        if settings.turn_ms > 0 {
            limit_ms = Some(settings.turn_ms as i64);
        }
        if settings.match_ms > 0 {
            let left = time_left[slot].max(0);
            limit_ms = Some(limit_ms.map_or(left, |l| l.min(left)));
        }
        let wait = limit_ms.map_or(NO_LIMIT_WAIT, |l| {
            Duration::from_millis((l + tolerance).max(0) as u64)
        });

        thread::sleep(settings.delay);
        let engine = &mut slots[slot];
        engine.drain(log, tag);
        let mut sent = Ok(());
        for c in &commands {
            sent = engine.send(c, log, tag);
            if sent.is_err() {
                break;
            }
        }
        let asked = Instant::now();
        let answer = match sent {
            Err(f) => Err(f),
            Ok(()) => engine
                .answer(asked + wait, log, tag)
                .map_err(|r| no_move(r, wait)),
        };
        let elapsed = asked.elapsed().as_millis() as u64;
        let result = answer.and_then(|line| {
            let mv = parse_answer(&board, &line)?;
            // The channel wait allows the tolerance; check the limits on the measured time too.
            if limit_ms.is_some_and(|l| elapsed as i64 > l + tolerance) {
                return Err(fault(
                    Reason::TimeForfeit,
                    format!("answered after {elapsed} ms"),
                ));
            }
            Ok(mv)
        });
        let mv = match result {
            Ok(mv) => mv,
            Err(f) => return (lose(slots, slot, f, moves), restarted),
        };
        time_left[slot] -= elapsed as i64;
        moves.push((mv, elapsed));
        match board.try_play(mv).expect("checked by parse_answer") {
            Status::Ongoing => {}
            Status::Won(p) => {
                let outcome = GameOutcome {
                    winner: Some(p),
                    reason: Reason::Five,
                    detail: format!("{} wins with {mv}", slots[slot].name),
                    moves,
                };
                log.log(&format!("{tag} {}", outcome.detail));
                return (outcome, restarted);
            }
            Status::Draw => {
                log.log(&format!("{tag} draw: the board is full"));
                return (
                    GameOutcome {
                        winner: None,
                        reason: Reason::BoardFull,
                        detail: "the board is full".to_string(),
                        moves,
                    },
                    restarted,
                );
            }
        }
    }
}

/// Why no move came within `wait`: the engine exited, or it is late.
pub(crate) fn no_move(received: Received, wait: Duration) -> Fault {
    match received {
        Received::Closed => fault(Reason::Crash, "the engine exited"),
        _ => fault(
            Reason::TimeForfeit,
            format!("no move within {} ms", wait.as_millis()),
        ),
    }
}

/// `START`/`RECTSTART`, the `OK` answer, and the `INFO` lines.
pub(crate) fn start(
    settings: &GameSettings,
    slot: &mut Slot,
    log: &Logger,
    tag: &str,
) -> Result<(), Fault> {
    let rules = settings.rules;
    let command = Command::start(&rules).to_string();
    thread::sleep(settings.delay);
    slot.drain(log, tag);
    slot.send(&command, log, tag)?;
    match slot.answer(Instant::now() + settings.start_timeout, log, tag) {
        Ok(line) if Reply::parse(&line) == Reply::Ok => {}
        Ok(line) => return Err(fault(Reason::StartFailed, format!("{command}: {line:?}"))),
        Err(Received::Closed) => return Err(fault(Reason::Crash, "the engine exited")),
        Err(_) => {
            return Err(fault(
                Reason::StartFailed,
                format!(
                    "no OK to {command} within {} ms",
                    settings.start_timeout.as_millis()
                ),
            ))
        }
    }
    let mut infos = vec![
        Info::TimeoutTurn(settings.turn_ms),
        Info::TimeoutMatch(settings.match_ms),
    ];
    infos.extend(settings.max_memory.map(Info::MaxMemory));
    infos.push(Info::Rule(rules.rule()));
    // 1: the opponent is a computer (protocol 2).
    infos.push(Info::GameType(1));
    for info in infos {
        slot.send(&Command::Info(info).to_string(), log, tag)?;
    }
    Ok(())
}

/// Reads an answer line as a legal move on `board`.
pub(crate) fn parse_answer(board: &Board, line: &str) -> Result<Move, Fault> {
    caro_gomocup::parse_answer(board, line).map_err(|e| match e {
        AnswerError::Error(line) => fault(Reason::EngineError, line),
        AnswerError::Illegal { answer, error } => {
            fault(Reason::IllegalMove, format!("{answer}: {error}"))
        }
        AnswerError::Garbage(line) => fault(Reason::Garbage, format!("{line:?} is not a move")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use caro_engine::Rule;

    #[test]
    fn answers_are_classified() {
        let rules = Rules::caro(15, 15, Rule::Caro).unwrap();
        let board = Board::from_moves(rules, &[Move::new(7, 7)]).unwrap();
        assert_eq!(parse_answer(&board, "8,7").unwrap(), Move::new(8, 7));
        assert_eq!(parse_answer(&board, " 8 , 7 ").unwrap(), Move::new(8, 7));
        let reason = |l: &str| parse_answer(&board, l).unwrap_err().reason;
        assert_eq!(reason("7,7"), Reason::IllegalMove);
        assert_eq!(reason("15,0"), Reason::IllegalMove);
        assert_eq!(reason("-1,3"), Reason::IllegalMove);
        assert_eq!(reason("hello"), Reason::Garbage);
        assert_eq!(reason("1,2,3"), Reason::Garbage);
        assert_eq!(reason("ERROR no idea"), Reason::EngineError);
    }
}
