//! One outside engine's child process: its start (in a process group of its own, and on Linux
//! tied to the server's life), its pipes read line by line with a length cap, and its end (a
//! kill of the whole group, so that a wrapper script's children go too, and a reap).
//!
//! The group is signalled only while its leader is unreaped: once the exit status is collected
//! the pid may belong to another process, so nothing here ever signals it again. This file
//! never reads an engine's answer as a move (that is the pool's job, with the board at hand)
//! and never touches rooms or clients.

use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::time::{timeout, timeout_at, Instant};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{forfeit, Forfeit};
use crate::config::OutsideConfig;
use crate::metrics::Metrics;
use crate::protocol::Fault;

/// The longest line read from an engine; a longer one is garbage.
pub(super) const MAX_LINE: usize = 16 * 1024;

/// Why no line came.
#[derive(Debug)]
pub(super) enum ReadError {
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
pub(super) struct Engine {
    /// Numbers the processes of a level, for the logs.
    pub(super) serial: u64,
    pid: Option<u32>,
    child: Child,
    stdin: ChildStdin,
    stdout: LineReader<ChildStdout>,
    metrics: Arc<Metrics>,
    name: String,
    /// When it last answered a move.
    pub(super) last_answer: Option<Instant>,
    /// Its exit status was collected: its pid may belong to another process by now, so its
    /// group must never be signalled again. Every reaping site signals the group first (an
    /// unreaped leader, even a zombie, keeps the group's id from being reused).
    reaped: bool,
}

impl Engine {
    /// Starts `cfg`'s program as the `serial`-numbered process of the level `name` (the number
    /// is taken only once the process has started). Its stderr is logged by a task of `tracker`
    /// until it closes or `shutdown`.
    pub(super) fn spawn(
        cfg: &OutsideConfig,
        name: &str,
        serial: &AtomicU64,
        metrics: &Arc<Metrics>,
        tracker: &TaskTracker,
        shutdown: &CancellationToken,
    ) -> Result<Engine, Forfeit> {
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
        let serial = serial.fetch_add(1, Relaxed);
        let pid = child.id();
        tracing::info!(bot = %name, engine = serial, pid, "outside engine started");
        metrics.outside_engines.fetch_add(1, Relaxed);
        metrics.outside_engine_starts_total.fetch_add(1, Relaxed);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        if let Some(stderr) = child.stderr.take() {
            let (name, shutdown) = (name.to_string(), shutdown.clone());
            tracker.spawn(async move {
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
            metrics: metrics.clone(),
            name: name.to_string(),
            last_answer: None,
            reaped: false,
        })
    }

    pub(super) async fn send(&mut self, lines: &[String]) -> std::io::Result<()> {
        let mut text = String::new();
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        self.stdin.write_all(text.as_bytes()).await?;
        self.stdin.flush().await
    }

    /// The next line that is not informational, by `deadline`.
    pub(super) async fn answer(&mut self, deadline: Instant) -> Result<String, ReadError> {
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
    pub(super) fn drain(&mut self) {
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
    pub(super) async fn crashed(&mut self, when: &str) -> Forfeit {
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
    pub(super) async fn kill(mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
        if let Ok(Ok(_)) = timeout(Duration::from_secs(2), self.child.wait()).await {
            self.reaped = true;
        }
    }

    /// Whether the process has exited, without collecting its status (`waitid` with
    /// `WNOWAIT`), so its group can still be signalled safely.
    pub(super) fn has_exited(&mut self) -> bool {
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

    /// Collects the exit status of a process that [`has_exited`](Engine::has_exited): its
    /// group first (a wrapper's children), while the exited leader is unreaped.
    pub(super) fn reap_exited(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.kill_group();
        let status = self.child.try_wait();
        self.reaped = matches!(status, Ok(Some(_)));
        status
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
