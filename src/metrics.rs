//! Server counters, rendered in the Prometheus text format at `GET /metrics`. Plain atomics:
//! updating a metric never waits.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds (seconds) of the bot search duration histogram.
const BUCKETS: [f64; 8] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0];

/// Every counter and gauge of the server.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Open WebSocket connections.
    pub connections: AtomicU64,
    /// WebSocket connections accepted since start.
    pub connections_total: AtomicU64,
    /// Connections refused at the limit.
    pub connections_refused_total: AtomicU64,
    /// Open TCP connections, from accept to close: HTTP, WebSocket, and those still sending
    /// their request head or being refused.
    pub tcp_connections: AtomicU64,
    /// Connections refused at the per-address limit.
    pub connections_refused_per_ip_total: AtomicU64,
    /// WebSocket upgrades refused by the per-address rate.
    pub upgrades_rate_limited_total: AtomicU64,
    /// WebSocket upgrades refused for their `Origin`.
    pub upgrades_forbidden_origin_total: AtomicU64,
    /// Sessions in memory (identities, connected or not).
    pub sessions: AtomicU64,
    /// Open rooms.
    pub rooms: AtomicU64,
    /// Rooms created since start.
    pub rooms_total: AtomicU64,
    /// Games in progress.
    pub games_active: AtomicU64,
    /// Games finished since start.
    pub games_finished_total: AtomicU64,
    /// Moves played since start.
    pub moves_total: AtomicU64,
    /// Client messages received.
    pub messages_total: AtomicU64,
    /// Messages refused by the rate limit.
    pub rate_limited_total: AtomicU64,
    /// Connections dropped for not reading fast enough.
    pub slow_clients_dropped_total: AtomicU64,
    /// Bot searches running now.
    pub bot_searches_active: AtomicU64,
    /// The most bot searches ever running at once: a high-water mark kept where the count
    /// changes, so a test (or an operator) sees a burst that sampling `/metrics` would miss.
    pub bot_searches_peak: AtomicU64,
    /// Bot searches finished.
    pub bot_searches_total: AtomicU64,
    /// Outside engine processes running (idle or thinking).
    pub outside_engines: AtomicU64,
    /// Outside engine processes started.
    pub outside_engine_starts_total: AtomicU64,
    /// Games an outside engine lost by forfeit (timeout, illegal move, crash, ...).
    pub outside_engine_forfeits_total: AtomicU64,
    bot_search_micros: AtomicU64,
    bot_search_buckets: [AtomicU64; BUCKETS.len()],
}

impl Metrics {
    /// Counts a search that starts running (it holds its slot) and raises the peak.
    pub fn search_started(&self) {
        let now = self.bot_searches_active.fetch_add(1, Relaxed) + 1;
        self.bot_searches_peak.fetch_max(now, Relaxed);
    }

    /// Counts a search that stopped running (started with [`Metrics::search_started`]).
    pub fn search_ended(&self) {
        self.bot_searches_active.fetch_sub(1, Relaxed);
    }

    /// Records a finished search.
    pub fn search_done(&self, took: Duration) {
        self.bot_searches_total.fetch_add(1, Relaxed);
        self.bot_search_micros
            .fetch_add(took.as_micros() as u64, Relaxed);
        let secs = took.as_secs_f64();
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.bot_search_buckets[i].fetch_add(1, Relaxed);
            }
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut one = |name: &str, kind: &str, help: &str, v: &AtomicU64| {
            let _ = writeln!(out, "# HELP caro_{name} {help}");
            let _ = writeln!(out, "# TYPE caro_{name} {kind}");
            let _ = writeln!(out, "caro_{name} {}", v.load(Relaxed));
        };
        one(
            "connections",
            "gauge",
            "Open WebSocket connections.",
            &self.connections,
        );
        one(
            "connections_total",
            "counter",
            "WebSocket connections accepted.",
            &self.connections_total,
        );
        one(
            "connections_refused_total",
            "counter",
            "Connections refused at max_connections.",
            &self.connections_refused_total,
        );
        one(
            "tcp_connections",
            "gauge",
            "Open TCP connections, including those not yet past their request head.",
            &self.tcp_connections,
        );
        one(
            "connections_refused_per_ip_total",
            "counter",
            "Connections refused at max_connections_per_ip.",
            &self.connections_refused_per_ip_total,
        );
        one(
            "upgrades_rate_limited_total",
            "counter",
            "WebSocket upgrades refused at upgrades_per_ip_per_sec.",
            &self.upgrades_rate_limited_total,
        );
        one(
            "upgrades_forbidden_origin_total",
            "counter",
            "WebSocket upgrades refused for their Origin.",
            &self.upgrades_forbidden_origin_total,
        );
        one(
            "sessions",
            "gauge",
            "Sessions in memory (connected or not).",
            &self.sessions,
        );
        one("rooms", "gauge", "Open rooms.", &self.rooms);
        one(
            "rooms_total",
            "counter",
            "Rooms created.",
            &self.rooms_total,
        );
        one(
            "games_active",
            "gauge",
            "Games in progress.",
            &self.games_active,
        );
        one(
            "games_finished_total",
            "counter",
            "Games finished.",
            &self.games_finished_total,
        );
        one("moves_total", "counter", "Moves played.", &self.moves_total);
        one(
            "messages_total",
            "counter",
            "Client messages received.",
            &self.messages_total,
        );
        one(
            "rate_limited_total",
            "counter",
            "Messages refused by the rate limit.",
            &self.rate_limited_total,
        );
        one(
            "slow_clients_dropped_total",
            "counter",
            "Connections dropped for falling behind.",
            &self.slow_clients_dropped_total,
        );
        one(
            "bot_searches_active",
            "gauge",
            "Bot searches running.",
            &self.bot_searches_active,
        );
        one(
            "bot_searches_peak",
            "gauge",
            "The most bot searches running at once since start.",
            &self.bot_searches_peak,
        );
        one(
            "outside_engines",
            "gauge",
            "Outside engine processes running.",
            &self.outside_engines,
        );
        one(
            "outside_engine_starts_total",
            "counter",
            "Outside engine processes started.",
            &self.outside_engine_starts_total,
        );
        one(
            "outside_engine_forfeits_total",
            "counter",
            "Games lost by an outside engine's fault.",
            &self.outside_engine_forfeits_total,
        );
        let _ = writeln!(
            out,
            "# HELP caro_bot_search_seconds Duration of bot searches."
        );
        let _ = writeln!(out, "# TYPE caro_bot_search_seconds histogram");
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "caro_bot_search_seconds_bucket{{le=\"{b}\"}} {}",
                self.bot_search_buckets[i].load(Relaxed)
            );
        }
        let count = self.bot_searches_total.load(Relaxed);
        let _ = writeln!(out, "caro_bot_search_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            out,
            "caro_bot_search_seconds_sum {}",
            self.bot_search_micros.load(Relaxed) as f64 / 1e6
        );
        let _ = writeln!(out, "caro_bot_search_seconds_count {count}");
        out
    }
}
