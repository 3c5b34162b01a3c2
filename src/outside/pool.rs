//! The processes of one outside level: at most `max_processes` of them, started when first
//! needed, kept idle between moves and handed to whichever game asks next; the restart policy
//! after failures (`Health`); and the protocol exchange of one move (`START`, the `INFO` lines,
//! the position, the answer checked against the board).
//!
//! A process is checked out for one move and comes back only after a move played without fault:
//! one that failed in any way is killed, never returned to the idle list. This file never
//! signals, reaps or reads a child process itself (that is [`Engine`]'s job, which keeps the
//! order that makes a group kill safe), and never touches rooms or clients.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use caro_engine::Board;
use caro_gomocup::{AnswerError, Command, Info, Reply};
use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{timeout, timeout_at, Instant};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::process::{Engine, ReadError, MAX_LINE};
use super::{forfeit, quote, Answer, Forfeit, GameClock};
use crate::config::OutsideConfig;
use crate::metrics::Metrics;
use crate::protocol::Fault;

/// How long an engine may take to exit after `END` at shutdown before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);
/// The longest rest after failures in a row.
const MAX_REST: Duration = Duration::from_secs(60);
/// The least time between an engine's answer and the next command to it: some engines drop a
/// command that arrives right after they wrote their move (the match runner's `--delay-ms`).
const COMMAND_GAP: Duration = Duration::from_millis(15);

/// Restart policy of a level: the first failure restarts at once; each further failure in a row
/// doubles a rest before the next start (1 s, 2 s, 4 s, ... at most [`MAX_REST`]). A move played
/// without fault ends the streak. A game that needs a new process while the level rests is
/// forfeited at once (`unavailable`) rather than kept waiting.
#[derive(Debug, Default)]
struct Health {
    failures: u32,
    rest_until: Option<Instant>,
}

impl Health {
    fn failed(&mut self, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        self.rest_until = Some(now + rest_after(self.failures));
    }

    fn succeeded(&mut self) {
        *self = Health::default();
    }

    /// How long the level still rests, if it does.
    fn resting(&self, now: Instant) -> Option<Duration> {
        self.rest_until
            .filter(|t| *t > now)
            .map(|t| t.saturating_duration_since(now))
    }
}

/// The rest before the next start after `failures` failures in a row.
fn rest_after(failures: u32) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n => Duration::from_secs(1u64 << (n - 2).min(6)).min(MAX_REST),
    }
}

/// The processes of one outside level.
pub struct EnginePool {
    name: String,
    cfg: Arc<OutsideConfig>,
    /// One permit per process that may exist: held while a process is checked out.
    slots: Arc<Semaphore>,
    idle: Mutex<Vec<Engine>>,
    health: Mutex<Health>,
    metrics: Arc<Metrics>,
    tracker: TaskTracker,
    shutdown: CancellationToken,
    serial: AtomicU64,
}

impl fmt::Debug for EnginePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnginePool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl EnginePool {
    /// A pool for the level `name`; no process starts before the first move request.
    pub fn new(
        name: &str,
        cfg: Arc<OutsideConfig>,
        metrics: Arc<Metrics>,
        tracker: TaskTracker,
        shutdown: CancellationToken,
    ) -> EnginePool {
        EnginePool {
            name: name.to_string(),
            slots: Arc::new(Semaphore::new(cfg.max_processes)),
            cfg,
            idle: Mutex::new(Vec::new()),
            health: Mutex::new(Health::default()),
            metrics,
            tracker,
            shutdown,
            serial: AtomicU64::new(1),
        }
    }

    /// Waits for a process slot of this level (there are `max_processes`).
    pub async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        self.slots.clone().acquire_owned().await.ok()
    }

    /// The level's time per move (`time_ms`).
    pub fn turn_time(&self) -> Duration {
        self.cfg.turn_time
    }

    /// Asks a process for the move of the side to move on `board`, under `slot`. An idle
    /// process is reused, else one is started. Returns when the engine answered, forfeited (its
    /// process is then killed), or the server shuts down. Never longer than the start timeout
    /// plus the move's limit plus the margin.
    pub async fn play(
        &self,
        slot: OwnedSemaphorePermit,
        board: &Board,
        clock: &GameClock,
        opponent_human: bool,
    ) -> Result<Answer, Forfeit> {
        let (mut engine, reused) = match self.checkout() {
            Ok(e) => e,
            Err(f) => {
                if f.fault != Fault::Unavailable {
                    self.failed();
                }
                self.metrics
                    .outside_engine_forfeits_total
                    .fetch_add(1, Relaxed);
                return Err(f);
            }
        };
        let result = tokio::select! {
            r = self.start_then_move(&mut engine, reused, board, clock, opponent_human) => Some(r),
            _ = self.shutdown.cancelled() => None,
        };
        let Some(result) = result else {
            engine.kill().await;
            return Err(forfeit(Fault::Crash, "the server is shutting down"));
        };
        match result {
            Ok(answer) => {
                self.health.lock().succeeded();
                self.idle.lock().push(engine);
                drop(slot);
                Ok(answer)
            }
            Err(f) => {
                tracing::warn!(
                    bot = %self.name,
                    engine = engine.serial,
                    fault = f.fault.as_str(),
                    "outside engine forfeits: {}",
                    f.detail
                );
                self.failed();
                self.metrics
                    .outside_engine_forfeits_total
                    .fetch_add(1, Relaxed);
                engine.kill().await;
                drop(slot);
                Err(f)
            }
        }
    }

    /// The game, then the move. A reused process that fails to start the game (it died while
    /// idle, or refuses a second START) is replaced once by a fresh one: the failure is the
    /// previous game's process's, not this game's.
    async fn start_then_move(
        &self,
        engine: &mut Engine,
        reused: bool,
        board: &Board,
        clock: &GameClock,
        opponent_human: bool,
    ) -> Result<Answer, Forfeit> {
        if let Err(f) = self.start_game(engine, board).await {
            if !reused {
                return Err(f);
            }
            tracing::warn!(
                bot = %self.name,
                engine = engine.serial,
                "reused outside engine could not start a game ({}); starting another",
                f.detail
            );
            let fresh = self.spawn()?;
            std::mem::replace(engine, fresh).kill().await;
            self.start_game(engine, board).await?;
        }
        self.exchange(engine, board, clock, opponent_human).await
    }

    fn failed(&self) {
        self.health.lock().failed(Instant::now());
    }

    /// An idle process that is still alive (`true`: reused), or a new one.
    fn checkout(&self) -> Result<(Engine, bool), Forfeit> {
        loop {
            let Some(mut e) = self.idle.lock().pop() else {
                break;
            };
            if !e.has_exited() {
                return Ok((e, true));
            }
            let status = e.reap_exited();
            tracing::warn!(
                bot = %self.name,
                engine = e.serial,
                "idle outside engine exited ({status:?}); starting another"
            );
        }
        let resting = {
            let health = self.health.lock();
            health.resting(Instant::now()).map(|r| (r, health.failures))
        };
        if let Some((rest, failures)) = resting {
            return Err(forfeit(
                Fault::Unavailable,
                format!(
                    "the engine failed {failures} times in a row; it is restarted in {:.1} s",
                    rest.as_secs_f64()
                ),
            ));
        }
        Ok((self.spawn()?, false))
    }

    fn spawn(&self) -> Result<Engine, Forfeit> {
        Engine::spawn(
            &self.cfg,
            &self.name,
            &self.serial,
            &self.metrics,
            &self.tracker,
            &self.shutdown,
        )
    }

    /// A new game for the engine: START (or RECTSTART), answered OK.
    async fn start_game(&self, e: &mut Engine, board: &Board) -> Result<(), Forfeit> {
        let cfg = &self.cfg;
        if let Some(t) = e.last_answer {
            tokio::time::sleep_until(t + COMMAND_GAP).await;
        }
        e.drain();
        // The game: START (or RECTSTART), answered OK.
        let start = Command::start(board.rules()).to_string();
        let deadline = Instant::now() + cfg.start_timeout;
        let no_ok = || {
            forfeit(
                Fault::StartFailed,
                format!(
                    "no OK to {start} within {} ms (start_timeout_ms)",
                    cfg.start_timeout.as_millis()
                ),
            )
        };
        match timeout_at(deadline, e.send(std::slice::from_ref(&start))).await {
            Err(_) => return Err(no_ok()),
            Ok(Err(_)) => return Err(e.crashed("before answering START").await),
            Ok(Ok(())) => {}
        }
        match e.answer(deadline).await {
            Ok(line) if Reply::parse(&line) == Reply::Ok => {}
            Ok(line) => {
                return Err(forfeit(
                    Fault::StartFailed,
                    format!("answered {} to {start}", quote(&line)),
                ))
            }
            Err(ReadError::Closed) => return Err(e.crashed("before answering START").await),
            Err(ReadError::TooLong) => {
                return Err(forfeit(
                    Fault::StartFailed,
                    format!("answered {start} with a line of over {MAX_LINE} bytes"),
                ))
            }
            Err(ReadError::Timeout) => return Err(no_ok()),
        }

        Ok(())
    }

    /// One move of a started game: the position, the answer.
    async fn exchange(
        &self,
        e: &mut Engine,
        board: &Board,
        clock: &GameClock,
        opponent_human: bool,
    ) -> Result<Answer, Forfeit> {
        let cfg = &self.cfg;
        // The position, under the move's limit: the turn time, or what is left of the clock.
        let turn_ms = cfg.turn_time.as_millis() as u64;
        let left_ms = cfg.match_time.map(|m| clock.left_ms(m));
        let (limit, limit_text) = match left_ms {
            Some(left) if (left.max(0) as u64) < turn_ms => (
                Duration::from_millis(left.max(0) as u64),
                format!("its {} ms left on the game clock", left.max(0)),
            ),
            _ => (cfg.turn_time, format!("time_ms {turn_ms}")),
        };
        // Under the room's game clock the engine is told its share of it for this move, and the
        // clock's time left (docs/bots.md, "Bots under a clock").
        let game = clock.game_time();
        let mut infos = vec![
            Info::TimeoutTurn(game.map_or(turn_ms, |(budget, _)| budget.min(turn_ms))),
            Info::TimeoutMatch(cfg.match_time.map_or(0, |m| m.as_millis() as u64)),
        ];
        infos.extend(
            game.map(|(_, left)| left as i64)
                .or(left_ms)
                .map(Info::TimeLeft),
        );
        infos.extend(cfg.max_memory.map(Info::MaxMemory));
        // 0: the opponent is a human, 1: another program (protocol 2).
        infos.push(Info::GameType(u8::from(!opponent_human)));
        infos.push(Info::Rule(board.rules().rule()));
        let mut lines: Vec<String> = infos
            .into_iter()
            .map(|info| Command::Info(info).to_string())
            .collect();
        lines.extend(caro_gomocup::position_commands(board));
        let asked = Instant::now();
        let deadline = asked + limit + cfg.margin;
        let late = || {
            forfeit(
                Fault::Timeout,
                format!(
                    "no move within {} ms ({limit_text} + margin_ms {}); the engine was stopped",
                    (limit + cfg.margin).as_millis(),
                    cfg.margin.as_millis()
                ),
            )
        };
        match timeout_at(deadline, e.send(&lines)).await {
            Err(_) => return Err(late()),
            Ok(Err(_)) => return Err(e.crashed("while thinking").await),
            Ok(Ok(())) => {}
        }
        let line = match e.answer(deadline).await {
            Ok(line) => line,
            Err(ReadError::Timeout) => return Err(late()),
            Err(ReadError::Closed) => return Err(e.crashed("while thinking").await),
            Err(ReadError::TooLong) => {
                return Err(forfeit(
                    Fault::Garbage,
                    format!("answered with a line of over {MAX_LINE} bytes"),
                ))
            }
        };
        let elapsed = asked.elapsed();
        e.last_answer = Some(Instant::now());
        let mv = caro_gomocup::parse_answer(board, &line).map_err(|err| match err {
            AnswerError::Error(_) => {
                forfeit(Fault::EngineError, format!("answered {}", quote(&line)))
            }
            AnswerError::Illegal { error, .. } => forfeit(
                Fault::IllegalMove,
                format!("played {}: {error}", quote(&line)),
            ),
            AnswerError::Garbage(_) => forfeit(
                Fault::Garbage,
                format!("answered {}, which is not a move", quote(&line)),
            ),
        })?;
        tracing::debug!(bot = %self.name, engine = e.serial, %mv, ?elapsed, "outside engine moved");
        Ok(Answer { mv, elapsed })
    }

    /// Ends the idle processes at shutdown, all together: `END`, a moment to exit by
    /// themselves, then a kill of whatever lingers (a wrapper's children included).
    pub async fn close(&self) {
        let mut idle = std::mem::take(&mut *self.idle.lock());
        if idle.is_empty() {
            return;
        }
        for e in &mut idle {
            let _ = timeout(QUIT_GRACE, e.send(&[Command::End.to_string()])).await;
        }
        tokio::time::sleep(QUIT_GRACE).await;
        futures::future::join_all(idle.into_iter().map(Engine::kill)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_in_a_row_rest_longer_and_longer() {
        assert_eq!(
            rest_after(1),
            Duration::ZERO,
            "the first crash restarts at once"
        );
        assert_eq!(rest_after(2), Duration::from_secs(1));
        assert_eq!(rest_after(3), Duration::from_secs(2));
        assert_eq!(rest_after(6), Duration::from_secs(16));
        assert_eq!(rest_after(8), MAX_REST);
        assert_eq!(rest_after(u32::MAX), MAX_REST);
    }

    #[tokio::test(start_paused = true)]
    async fn a_level_rests_after_failures_and_a_good_move_ends_the_streak() {
        let mut h = Health::default();
        let t0 = Instant::now();
        h.failed(t0);
        assert_eq!(h.resting(t0), None);
        h.failed(t0);
        assert_eq!(h.resting(t0), Some(Duration::from_secs(1)));
        tokio::time::advance(Duration::from_millis(400)).await;
        assert_eq!(h.resting(Instant::now()), Some(Duration::from_millis(600)));
        tokio::time::advance(Duration::from_millis(600)).await;
        assert_eq!(h.resting(Instant::now()), None);
        h.failed(Instant::now());
        assert_eq!(h.resting(Instant::now()), Some(Duration::from_secs(2)));
        h.succeeded();
        assert_eq!(h.resting(Instant::now()), None);
        assert_eq!(h.failures, 0);
    }
}
