//! `scripts/cluster` with the load generator as its command, as docs/performance.md runs it:
//! real caro-arena processes on the PostgreSQL (and Redis) of `scripts/services`.
//!
//! Needs `CARO_TEST_POSTGRES_URL` (`bash scripts/services cargo test -p caro-loadgen`) and the
//! caro-arena binary next to caro-loadgen (`cargo build --bin caro-arena`; `cargo test
//! --workspace` builds it). Without them a test skips with a message, unless
//! `CARO_REQUIRE_SERVICES=1` (scripts/test): then it fails.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// The checkout's root, where the script and the load-test config are.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn loadgen() -> &'static str {
    env!("CARGO_BIN_EXE_caro-loadgen")
}

/// The caro-arena binary and the services, or `None` (said on stderr) if a developer's plain
/// `cargo test` lacks them.
fn needs(test: &str, redis: bool) -> Option<PathBuf> {
    let bin = Path::new(loadgen()).with_file_name("caro-arena");
    let mut missing = Vec::new();
    if !bin.exists() {
        missing.push(format!("{} (cargo build --bin caro-arena)", bin.display()));
    }
    let mut vars = vec!["CARO_TEST_POSTGRES_URL"];
    if redis {
        vars.push("CARO_TEST_REDIS_URL");
    }
    for v in vars {
        if std::env::var(v).is_err() {
            missing.push(format!("{v} (run under scripts/services)"));
        }
    }
    if missing.is_empty() {
        return Some(bin);
    }
    let why = missing.join(", ");
    if std::env::var("CARO_REQUIRE_SERVICES").as_deref() == Ok("1") {
        panic!("{test}: missing {why} but CARO_REQUIRE_SERVICES=1");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{test}: SKIPPED, missing {why}");
    None
}

/// Runs `bash scripts/cluster ARGS` (3 minutes at most: then SIGTERM, so the script still
/// stops its nodes).
/// `scripts/cluster` with the load-test limits and three nodes, running `command` (bash).
async fn three_nodes(bin: &Path, command: &str) -> Output {
    let args = [
        "--config",
        "crates/loadgen/load.toml",
        "3",
        "--",
        "bash",
        "-c",
        command,
    ];
    cluster(bin, &args).await
}

async fn cluster(bin: &Path, args: &[&str]) -> Output {
    let child = tokio::process::Command::new("bash")
        .arg("scripts/cluster")
        .args(args)
        .current_dir(root())
        .env("CARO_ARENA_BIN", bin)
        .env_remove("CARO_CLUSTER_URLS")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    match tokio::time::timeout(Duration::from_secs(180), child.wait_with_output()).await {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            panic!("scripts/cluster {args:?} did not end within 3 minutes");
        }
    }
}

/// What follows `key` on the script's stderr, up to the next comma or space.
fn logged<'a>(stderr: &'a str, key: &str) -> &'a str {
    let at = stderr
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in {stderr}"))
        + key.len();
    stderr[at..].split([',', ' ', '\n']).next().unwrap()
}

/// The last line of stdout: the loadgen's JSON summary.
fn summary(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_runs_the_loadgen_against_its_nodes_and_cleans_up() {
    let Some(bin) = needs(
        "the_script_runs_the_loadgen_against_its_nodes_and_cleans_up",
        false,
    ) else {
        return;
    };
    // --no-redis: independent nodes (the server may not know [cluster] yet), so the generator
    // loads the first one; the script's part is the same.
    let cmd = format!(
        r#"exec {} --server "${{CARO_CLUSTER_URLS%%,*}}" fanout -s 4 -m 6 -t 5 --board 15"#,
        loadgen()
    );
    let args = [
        "--no-redis",
        "--config",
        "crates/loadgen/load.toml",
        "2",
        "--",
        "bash",
        "-c",
        &cmd,
    ];
    let out = cluster(&bin, &args).await;
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let nodes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("node-"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(nodes, ["node-a", "node-b"], "{all}");
    assert!(stdout.contains("node-b http://127.0.0.1:"), "{all}");
    assert_eq!(summary(&out)["summary"]["server"]["samples"], 24.0, "{all}");
    // Afterwards: the nodes' configs and the run's database are gone.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let dir = logged(&stderr, "configs in ");
    assert!(!Path::new(dir).exists(), "{dir} left behind");
    let db = logged(&stderr, "database ");
    assert!(db.starts_with("caro_cluster_"), "{all}");
    let left = std::process::Command::new("psql")
        .args(["-X", "-At", "-c"])
        .arg(format!(
            "SELECT count(*) FROM pg_database WHERE datname = '{db}'"
        ))
        .arg(std::env::var("CARO_TEST_POSTGRES_URL").unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&left.stdout).trim(),
        "0",
        "{db} left behind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_exits_with_its_commands_status() {
    let Some(bin) = needs("the_script_exits_with_its_commands_status", false) else {
        return;
    };
    let out = cluster(&bin, &["--no-redis", "1", "--", "bash", "-c", "exit 7"]).await;
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
}

/// The acceptance run of issue 19's load generator part: three real nodes, fanout spectators
/// on all three, rooms with cross- and same-node pairs, no errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loadgen_spreads_its_clients_over_a_three_node_cluster() {
    let Some(bin) = needs(
        "the_loadgen_spreads_its_clients_over_a_three_node_cluster",
        true,
    ) else {
        return;
    };
    let lg = loadgen();
    let fanout = format!("{lg} --single fanout -s 6 -m 6 -t 20 --board 15");
    let out = three_nodes(&bin, &fanout).await;
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let s = &summary(&out)["summary"];
    // Six spectators, two a node, six moves; the first node alone delivers the same 36.
    assert_eq!(s["server"]["samples"], 36.0, "{all}");
    for node in 0..3 {
        assert_eq!(s["server"][format!("node{node}_samples")], 12.0, "{all}");
    }
    assert_eq!(s["single"]["samples"], 36.0, "{all}");

    let rooms = format!("{lg} rooms -r 6 -k 1 -d 3 --warmup 1 --board 5 --pairing mixed");
    let out = three_nodes(&bin, &rooms).await;
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let run: serde_json::Value = stdout
        .lines()
        .find(|l| l.starts_with(r#"{"scenario":"rooms","run":1"#))
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap_or_else(|| panic!("no run line: {all}"));
    assert_eq!(run["errors"], 0, "{all}");
    assert_eq!(run["nodes"], 3, "{all}");
    for part in run["per_pairing"].as_array().unwrap() {
        assert!(part["ack"]["count"].as_u64().unwrap() > 0, "{all}");
        assert!(part["opponent"]["count"].as_u64().unwrap() > 0, "{all}");
    }
}
