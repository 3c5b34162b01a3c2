//! `caro-arena`: parses the command line, loads `config.toml`, binds and runs the server until
//! Ctrl-C or SIGTERM.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

/// The caro-arena game server.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Configuration file.
    #[arg(long, default_value = "config.toml")]
    config: PathBuf,
    /// Listen address, overriding `server.bind`.
    #[arg(long)]
    bind: Option<std::net::SocketAddr>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    // Every connection is a file descriptor, and the usual soft limit (1024) is far below
    // limits.max_connections: raise it to the hard limit (docs/performance.md).
    let nofile = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(0);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("caro-arena: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(args, nofile)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the chain on one line: "invalid configuration x.toml: key: why".
            eprintln!("caro-arena: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(args: Args, nofile: u64) -> anyhow::Result<()> {
    let mut config = caro_arena::config::Config::load(&args.config)
        .with_context(|| format!("invalid configuration {}", args.config.display()))?;
    if let Some(bind) = args.bind {
        config.server.bind = bind;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&config.server.log));
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let settings = config.store.clone();
    let store = tokio::task::spawn_blocking(move || caro_arena::store::open(&settings))
        .await?
        .with_context(|| format!("cannot open the game database {}", config.store.describe()))?;
    if (nofile as usize) < config.limits.max_connections + 64 {
        tracing::warn!(
            nofile,
            max_connections = config.limits.max_connections,
            "the open-file limit is below limits.max_connections: connections past it fail to accept"
        );
    }
    let listener = tokio::net::TcpListener::bind(config.server.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.server.bind))?;
    // On stdout, one line, so scripts and tests started with port 0 learn the address.
    println!("listening on {}", listener.local_addr()?);
    caro_arena::run_with_store(listener, config, store, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
