//! `connections`: N idle clients (hello, then a WebSocket ping now and then) held open; the
//! server's resident memory before and after, and what each connection costs.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use crate::{client, sys, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Connections to open.
    pub connections: usize,
    /// Handshakes in flight at once.
    pub concurrency: usize,
    /// How long to hold them all once open (the memory is read after `settle`).
    pub hold: Duration,
    /// Wait after the last connection opened before reading the memory.
    pub settle: Duration,
    /// A client ping this often keeps each connection alive (the server's idle timeout).
    pub heartbeat: Duration,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `server` or `baseline`.
    pub target: String,
    /// Connections asked for.
    pub connections: usize,
    /// Connections that said hello and got `welcome`.
    pub opened: usize,
    /// Connections still open when the hold ended.
    pub held: usize,
    /// Connections that failed to open.
    pub failed: usize,
    /// Seconds from the first connect to the last `welcome`.
    pub open_secs: f64,
    /// Server RSS before connecting (bytes), if known.
    pub rss_before: Option<u64>,
    /// Server RSS with every connection open (bytes), if known.
    pub rss_after: Option<u64>,
    /// (after - before) / opened.
    pub bytes_per_connection: Option<f64>,
}

impl Report {
    /// The numbers compared between targets.
    pub fn key_metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("held", self.held as f64),
            (
                "bytes_per_connection",
                self.bytes_per_connection.unwrap_or(f64::NAN),
            ),
            ("open_secs", self.open_secs),
        ]
    }

    /// One line for people.
    pub fn human(&self) -> String {
        let mib =
            |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0));
        format!(
            "connections [{}]: {}/{} held ({} failed), opened in {:.1}s; RSS {} -> {}; {} per connection",
            self.target,
            self.held,
            self.connections,
            self.failed,
            self.open_secs,
            mib(self.rss_before),
            mib(self.rss_after),
            self.bytes_per_connection
                .map_or("?".into(), |b| format!("{:.0} B ({:.1} KiB)", b, b / 1024.0)),
        )
    }
}

/// Opens `opts.connections` idle connections to `target`, holds them, reports.
pub async fn run(target: &Target, opts: &Opts) -> anyhow::Result<Report> {
    let rss_before = target.pid.and_then(sys::rss_bytes);
    let opened = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let permits = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(opts.connections);
    for i in 0..opts.connections {
        let (addr, opened, failed, permits, mut stop) = (
            target.addr,
            opened.clone(),
            failed.clone(),
            permits.clone(),
            stop_rx.clone(),
        );
        let heartbeat = opts.heartbeat;
        tasks.push(tokio::spawn(async move {
            let ws = {
                let _permit = permits.acquire().await;
                client::hello(addr, &format!("idle{i}")).await
            };
            let mut ws = match ws {
                Ok(ws) => ws,
                Err(e) => {
                    if failed.fetch_add(1, Relaxed) == 0 {
                        eprintln!("connections: first failure: {e:#}");
                    }
                    return false;
                }
            };
            opened.fetch_add(1, Relaxed);
            let mut ping = tokio::time::interval_at(Instant::now() + heartbeat, heartbeat);
            loop {
                tokio::select! {
                    _ = stop.changed() => break,
                    _ = ping.tick() => {
                        if ws.send(Message::Ping(Default::default())).await.is_err() {
                            return false;
                        }
                    }
                    m = ws.next() => match m {
                        Some(Ok(_)) => {}
                        _ => return false,
                    },
                }
            }
            client::close(ws).await;
            true
        }));
    }
    // Every client has either opened or failed (bounded by each step's own timeout).
    while opened.load(Relaxed) + failed.load(Relaxed) < opts.connections {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let open_secs = started.elapsed().as_secs_f64();
    tokio::time::sleep(opts.settle).await;
    let rss_after = target.pid.and_then(sys::rss_bytes);
    let rest = opts.hold.saturating_sub(opts.settle);
    tokio::time::sleep(rest).await;
    let _ = stop_tx.send(true);
    let mut held = 0;
    for t in tasks {
        if let Ok(true) = t.await {
            held += 1;
        }
    }
    let opened = opened.load(Relaxed);
    let bytes_per_connection = match (rss_before, rss_after) {
        (Some(b), Some(a)) if opened > 0 => Some((a as f64 - b as f64) / opened as f64),
        _ => None,
    };
    Ok(Report {
        target: target.name.clone(),
        connections: opts.connections,
        opened,
        held,
        failed: failed.load(Relaxed),
        open_secs,
        rss_before,
        rss_after,
        bytes_per_connection,
    })
}
