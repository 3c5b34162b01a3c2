//! `caro-baseline`: the bare-stack relay server the load generator compares caro-arena with
//! (see `caro_loadgen::baseline`). Prints `listening on ADDR`, serves until Ctrl-C.

use clap::Parser;

/// The baseline relay server (tokio + tokio-tungstenite, no game logic).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Listen address (loopback).
    #[arg(long, default_value = "127.0.0.1:8090")]
    bind: std::net::SocketAddr,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    caro_loadgen::sys::raise_nofile();
    let listener = tokio::net::TcpListener::bind(args.bind).await?;
    println!("listening on {}", listener.local_addr()?);
    caro_loadgen::baseline::run(listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
