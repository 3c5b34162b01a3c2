//! # caro-loadgen
//!
//! Measures caro-arena over its real protocol, and the same traffic against [`baseline`], the
//! thinnest server on the same stack, so each number comes with the ratio to what the stack
//! itself allows on the machine. See `docs/performance.md` for the commands and the results.
//!
//! - [`scenario`]: `connections`, `fanout`, `rooms`, `bots`, `abuse` (bounded: every loop ends by itself).
//! - [`client`] and [`wire`]: the few messages a scripted client sends and reads.
//! - [`stats`]: HdrHistogram latencies and medians; [`sys`]: fd limits, loopback-only targets,
//!   a server's RSS from `/proc`; [`spawn`]: starting the servers for a run.
//!
//! The generator only ever talks to loopback addresses ([`sys::loopback`]).

pub mod baseline;
pub mod client;
pub mod scenario;
pub mod script;
pub mod spawn;
pub mod stats;
pub mod sys;
pub mod wire;

use std::net::SocketAddr;

/// A server under load.
#[derive(Clone, Debug)]
pub struct Target {
    /// `server` or `baseline`, as reports name it.
    pub name: String,
    /// Where it listens (loopback).
    pub addr: SocketAddr,
    /// Its process, for resident memory.
    pub pid: Option<u32>,
}
