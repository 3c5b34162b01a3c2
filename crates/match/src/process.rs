//! An engine as a child process speaking the Gomocup protocol on its stdin and stdout.
//!
//! A reader thread turns the engine's stdout into lines on a channel, so the referee can wait for
//! an answer with a timeout (`recv_timeout`) instead of blocking on a pipe that a hung engine
//! never writes to; the end of stdout (a crash or an exit) closes the channel. The engine's
//! stderr is discarded: the protocol lives on stdout only.
//!
//! Nothing here knows the game; [`crate::referee`] decides what the lines mean.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Why an engine could not be started or talked to.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The command line is empty or its quotes do not close.
    #[error("bad engine command {0:?}")]
    BadCommand(String),
    /// The program could not be started.
    #[error("cannot start {command:?}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Writing to the engine failed: it has exited.
    #[error("cannot write to the engine: {0}")]
    Write(std::io::Error),
}

/// What waiting for a line gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A line, without its line end.
    Line(String),
    /// Nothing within the time.
    Timeout,
    /// The engine closed its stdout (it exited or crashed).
    Closed,
}

/// Splits a command line into program and arguments: whitespace separates, double or single
/// quotes group (no escapes). Enough for `pbrain-caro classic 2` or `"/path with space/brain"`.
pub fn split_command(command: &str) -> Result<Vec<String>, ProcessError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(ProcessError::BadCommand(command.to_string()));
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(ProcessError::BadCommand(command.to_string()));
    }
    Ok(words)
}

/// A running engine.
pub struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl EngineProcess {
    /// Starts `command` (see [`split_command`]) with piped stdin and stdout.
    pub fn spawn(command: &str) -> Result<EngineProcess, ProcessError> {
        let words = split_command(command)?;
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| ProcessError::Spawn {
                command: command.to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        // The thread ends when the engine closes stdout or the receiver is dropped.
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match reader.read_until(b'\n', &mut bytes) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(caro_gomocup::decode_line(&bytes)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Ok(EngineProcess {
            child,
            stdin,
            lines,
        })
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) -> Result<(), ProcessError> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(ProcessError::Write)
    }

    /// Waits up to `timeout` for the next line.
    pub fn recv(&self, timeout: Duration) -> Received {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Received::Line(line),
            Err(RecvTimeoutError::Timeout) => Received::Timeout,
            Err(RecvTimeoutError::Disconnected) => Received::Closed,
        }
    }

    /// Lines already received and not read (late output of an earlier command).
    pub fn drain(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Whether the process has exited.
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `END` and gives the engine `grace` to exit before killing it.
    pub fn quit(mut self, grace: Duration) {
        let _ = self.send(&caro_gomocup::Command::End.to_string());
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
            if self.has_exited() {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.kill();
    }

    /// Kills the process and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        // Never leave a stray engine behind (a worker that panics, an early return).
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_split_with_quotes() {
        assert_eq!(
            split_command("pbrain-caro classic 2").unwrap(),
            ["pbrain-caro", "classic", "2"]
        );
        assert_eq!(
            split_command("\"/a b/brain\"  'x y' z").unwrap(),
            ["/a b/brain", "x y", "z"]
        );
        assert!(split_command("  ").is_err());
        assert!(split_command("\"open").is_err());
    }
}
