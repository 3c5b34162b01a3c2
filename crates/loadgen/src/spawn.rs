//! Starting a server process for a run: the binary is started with `--bind 127.0.0.1:0`, its
//! `listening on ADDR` line read from stdout, and the rest of its output drained so it never
//! blocks on a full pipe. Dropping the [`Spawned`] kills the process.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{anyhow, Context};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running server process.
pub struct Spawned {
    child: Child,
    /// Its address.
    pub addr: SocketAddr,
    /// Its pid.
    pub pid: u32,
}

impl Spawned {
    /// Stops the process (SIGKILL: the load test keeps nothing worth a clean shutdown).
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Starts `bin` with `args` plus `--bind 127.0.0.1:0` and waits for its address.
pub async fn start(bin: &Path, args: &[String]) -> anyhow::Result<Spawned> {
    let mut child = Command::new(bin)
        .args(args)
        .args(["--bind", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let pid = child
        .id()
        .ok_or_else(|| anyhow!("{} exited at once", bin.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(a) = line.trim().strip_prefix("listening on ") {
                return Ok::<_, anyhow::Error>(Some(a.parse::<SocketAddr>()?));
            }
        }
        Ok(None)
    })
    .await
    .map_err(|_| anyhow!("{} did not say where it listens", bin.display()))??
    .ok_or_else(|| anyhow!("{} ended before listening", bin.display()))?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Spawned { child, addr, pid })
}
