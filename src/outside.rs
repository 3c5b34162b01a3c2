//! Outside engines as bots: bot levels played by a Gomocup program (Piskvork protocol 2,
//! <https://plastovicka.github.io/protocl2en.htm>) run as child processes with `tokio::process`.
//!
//! Each outside level has an [`EnginePool`]: at most `max_processes` processes, started when
//! first needed and kept idle between moves. A process is never tied to a game: every request
//! gives it the whole game again (`START`/`RECTSTART`, the `INFO` lines, then `BEGIN` or `BOARD`
//! ... `DONE`, see [`caro_gomocup`]), so any idle process serves any room, and a room
//! restored after a restart needs nothing from a process that is gone.
//!
//! The engine is trusted with nothing. Its answer must come within the level's time (or what is
//! left of its game clock) plus the margin, and be a legal move; `MESSAGE`, `DEBUG` and `UNKNOWN`
//! lines are logged, never read as a move. A timeout, an illegal move, garbage, an `ERROR` answer
//! or an exit mid-move is a [`Forfeit`]: the process is killed, with its process group so that a
//! wrapper script's children go too, and its bot loses that game. The next request starts a
//! fresh process. Failures in a row make the level rest before the next start (see
//! [`Health`]), so a broken command cannot spin.
//!
//! This module runs processes and speaks the protocol; [`crate::bot`] schedules the moves
//! (permits, cancellation, events to rooms). It never touches rooms or clients.

use std::fmt;
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use caro_engine::{Board, Move};
use caro_gomocup::{AnswerError, Command, Info, Reply};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{timeout, timeout_at, Instant};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::OutsideConfig;
use crate::metrics::Metrics;
use crate::protocol::Fault;

/// The longest line read from an engine; a longer one is garbage.
const MAX_LINE: usize = 16 * 1024;
/// How much of an engine's answer a forfeit's detail quotes.
const QUOTE_CHARS: usize = 60;
/// How long an engine may take to exit after `END` at shutdown before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);
/// The longest rest after failures in a row.
const MAX_REST: Duration = Duration::from_secs(60);
/// The least time between an engine's answer and the next command to it: some engines drop a
/// command that arrives right after they wrote their move (the match runner's `--delay-ms`).
const COMMAND_GAP: Duration = Duration::from_millis(15);

/// Why an outside engine lost its game: a stable code and a sentence for the players.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// What went wrong.
    pub fault: Fault,
    /// What happened, for humans (quotes at most a short piece of the engine's output).
    pub detail: String,
}

fn forfeit(fault: Fault, detail: impl Into<String>) -> Forfeit {
    Forfeit {
        fault,
        detail: detail.into(),
    }
}

/// A legal move and the time the engine took for it.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    /// The move, checked against the board.
    pub mv: Move,
    /// From sending the position to reading the answer.
    pub elapsed: Duration,
}

/// One bot seat's time used in its game, for levels with a match clock (`match_time_ms`).
#[derive(Debug, Default)]
pub struct GameClock {
    spent_ms: AtomicU64,
}

impl GameClock {
    /// Adds a move's time.
    pub fn spend(&self, d: Duration) {
        self.spent_ms.fetch_add(d.as_millis() as u64, Relaxed);
    }

    /// Milliseconds left of `total` (negative once overdrawn within the margin).
    fn left_ms(&self, total: Duration) -> i64 {
        total.as_millis() as i64 - self.spent_ms.load(Relaxed) as i64
    }
}

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
            // Its group first (a wrapper's children), while the exited leader is unreaped.
            e.kill_group();
            let status = e.child.try_wait();
            e.reaped = matches!(status, Ok(Some(_)));
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
        let cfg = &self.cfg;
        let mut cmd = tokio::process::Command::new(&cfg.program);
        cmd.args(&cfg.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &cfg.working_dir {
            cmd.current_dir(dir);
        }
        // Its own process group: a kill reaches a wrapper script's children too, and a Ctrl-C
        // meant for the server does not reach the engine (the server ends it).
        #[cfg(unix)]
        cmd.process_group(0);
        // And it dies with the server, even a server killed with SIGKILL, which runs no drop
        // code: the kernel sends it SIGKILL when the thread that started it ends (a runtime
        // worker thread, which lives as long as the server). A wrapper's own children are not
        // covered; `exec` in the wrapper avoids them.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) only, which is async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            forfeit(
                Fault::StartFailed,
                format!("cannot start {}: {e}", cfg.program.display()),
            )
        })?;
        let serial = self.serial.fetch_add(1, Relaxed);
        let pid = child.id();
        tracing::info!(bot = %self.name, engine = serial, pid, "outside engine started");
        self.metrics.outside_engines.fetch_add(1, Relaxed);
        self.metrics
            .outside_engine_starts_total
            .fetch_add(1, Relaxed);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        if let Some(stderr) = child.stderr.take() {
            let (name, shutdown) = (self.name.clone(), self.shutdown.clone());
            self.tracker.spawn(async move {
                let mut lines = LineReader::new(stderr);
                loop {
                    let line = tokio::select! {
                        l = lines.next() => l,
                        _ = shutdown.cancelled() => return,
                    };
                    match line {
                        Ok(line) => tracing::debug!(bot = %name, engine = serial, "stderr: {line}"),
                        Err(ReadError::TooLong | ReadError::Timeout) => {}
                        Err(ReadError::Closed) => return,
                    }
                }
            });
        }
        Ok(Engine {
            serial,
            pid,
            child,
            stdin,
            stdout: LineReader::new(stdout),
            metrics: self.metrics.clone(),
            name: self.name.clone(),
            last_answer: None,
            reaped: false,
        })
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
        let mut infos = vec![
            Info::TimeoutTurn(turn_ms),
            Info::TimeoutMatch(cfg.match_time.map_or(0, |m| m.as_millis() as u64)),
        ];
        infos.extend(left_ms.map(Info::TimeLeft));
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

/// An engine's output, quoted and cut short for a forfeit's detail.
fn quote(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= QUOTE_CHARS {
        format!("{line:?}")
    } else {
        let head: String = line.chars().take(QUOTE_CHARS).collect();
        format!("{head:?}...")
    }
}

/// Why no line came.
#[derive(Debug)]
enum ReadError {
    /// The stream ended (the process exited or closed it).
    Closed,
    /// A line longer than [`MAX_LINE`].
    TooLong,
    /// The deadline passed.
    Timeout,
}

/// Lines from a pipe, each at most [`MAX_LINE`] bytes. [`LineReader::next`] is cancel safe:
/// bytes read before a timeout stay in the buffer for the next call.
struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(inner: R) -> LineReader<R> {
        LineReader {
            inner,
            buf: Vec::new(),
        }
    }

    /// The next line without its line end (lossy UTF-8).
    async fn next(&mut self) -> Result<String, ReadError> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Ok(caro_gomocup::decode_line(&line));
            }
            if self.buf.len() > MAX_LINE {
                self.buf.clear();
                return Err(ReadError::TooLong);
            }
            match self.inner.read(&mut chunk).await {
                Ok(0) | Err(_) => return Err(ReadError::Closed),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// A running engine process.
struct Engine {
    /// Numbers the processes of a level, for the logs.
    serial: u64,
    pid: Option<u32>,
    child: Child,
    stdin: ChildStdin,
    stdout: LineReader<ChildStdout>,
    metrics: Arc<Metrics>,
    name: String,
    /// When it last answered a move.
    last_answer: Option<Instant>,
    /// Its exit status was collected: its pid may belong to another process by now, so its
    /// group must never be signalled again. Every reaping site signals the group first (an
    /// unreaped leader, even a zombie, keeps the group's id from being reused).
    reaped: bool,
}

impl Engine {
    async fn send(&mut self, lines: &[String]) -> std::io::Result<()> {
        let mut text = String::new();
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        self.stdin.write_all(text.as_bytes()).await?;
        self.stdin.flush().await
    }

    /// The next line that is not informational, by `deadline`.
    async fn answer(&mut self, deadline: Instant) -> Result<String, ReadError> {
        loop {
            let line = timeout_at(deadline, self.stdout.next())
                .await
                .map_err(|_| ReadError::Timeout)??;
            if caro_gomocup::is_informational(&line) {
                if !line.trim().is_empty() {
                    tracing::debug!(bot = %self.name, engine = self.serial, "{line}");
                }
                continue;
            }
            return Ok(line);
        }
    }

    /// Logs and drops output left over from the previous move (`MESSAGE` lines written after
    /// the answer, say), so that it is never read as an answer to this one.
    fn drain(&mut self) {
        loop {
            let mut next = std::pin::pin!(self.stdout.next());
            let waker = futures::task::noop_waker();
            let mut cx = std::task::Context::from_waker(&waker);
            match next.as_mut().poll(&mut cx) {
                std::task::Poll::Ready(Ok(line)) => {
                    tracing::debug!(bot = %self.name, engine = self.serial, "unrequested: {line}")
                }
                _ => return,
            }
        }
    }

    /// The forfeit of an engine whose output ended: its exit status if it comes at once.
    async fn crashed(&mut self, when: &str) -> Forfeit {
        // A wrapper's children go with it; the group first, while the leader is unreaped.
        self.kill_group();
        let status = match timeout(Duration::from_millis(500), self.child.wait()).await {
            Ok(Ok(status)) => {
                self.reaped = true;
                format!(" ({status})")
            }
            _ => String::new(),
        };
        forfeit(Fault::Crash, format!("the engine exited {when}{status}"))
    }

    /// Kills the process and its group, and reaps it.
    async fn kill(mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
        if let Ok(Ok(_)) = timeout(Duration::from_secs(2), self.child.wait()).await {
            self.reaped = true;
        }
    }

    /// Whether the process has exited, without collecting its status (`waitid` with
    /// `WNOWAIT`), so its group can still be signalled safely.
    fn has_exited(&mut self) -> bool {
        #[cfg(unix)]
        if let Some(pid) = self.pid {
            // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t we own.
            unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
                if libc::waitid(libc::P_PID, pid, &mut info, flags) == 0 {
                    return info.si_pid() != 0;
                }
            }
        }
        // No pid, or waitid failed (already collected): ask tokio, which reaps.
        match self.child.try_wait() {
            Ok(None) => false,
            Ok(Some(_)) => {
                self.reaped = true;
                true
            }
            Err(_) => true,
        }
    }

    fn kill_group(&self) {
        if self.reaped {
            return;
        }
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals the process group the engine leads
            // (it was started with process_group(0)); no memory is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // kill_on_drop ends the process itself; its group may hold more. (Not reaped yet, the
        // leader keeps the group id its own, exited or not.)
        self.kill_group();
        self.metrics.outside_engines.fetch_sub(1, Relaxed);
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

    #[test]
    fn details_quote_a_short_piece_of_the_output() {
        assert_eq!(quote(" hello "), "\"hello\"");
        let long = "x".repeat(500);
        assert_eq!(quote(&long), format!("\"{}\"...", "x".repeat(QUOTE_CHARS)));
    }
}
