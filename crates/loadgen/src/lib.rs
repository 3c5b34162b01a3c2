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

/// A server under load: one process, or the nodes of a cluster (docs/scaling.md).
#[derive(Clone, Debug)]
pub struct Target {
    /// `server`, `single` or `baseline`, as reports name it.
    pub name: String,
    /// Where it listens (loopback); a cluster's first node, where rooms are created.
    pub addr: SocketAddr,
    /// Its process, for resident memory and CPU.
    pub pid: Option<u32>,
    /// A cluster's other nodes (empty for one server). `fanout` and `rooms` spread their
    /// clients over `addr` and these; the other scenarios load `addr` alone.
    pub peers: Vec<Node>,
}

/// One more node of a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Where it listens (loopback).
    pub addr: SocketAddr,
    /// Its process, for CPU.
    pub pid: Option<u32>,
}

impl Target {
    /// One server.
    pub fn single(name: &str, addr: SocketAddr, pid: Option<u32>) -> Target {
        Target {
            name: name.into(),
            addr,
            pid,
            peers: Vec::new(),
        }
    }

    /// Nodes: 1 for one server.
    pub fn nodes(&self) -> usize {
        1 + self.peers.len()
    }

    /// The address of node `i` modulo the number of nodes (node 0 is `addr`), so that
    /// `node(k)` for k = 0, 1, 2... goes round-robin over them.
    pub fn node(&self, i: usize) -> SocketAddr {
        match i % self.nodes() {
            0 => self.addr,
            n => self.peers[n - 1].addr,
        }
    }

    /// CPU seconds (user + system) the target's processes have used so far: every node's,
    /// each process once (one process may serve several addresses). `None` if a pid is
    /// unknown or its `/proc` entry cannot be read.
    pub fn cpu_secs(&self) -> Option<f64> {
        let mut pids = vec![self.pid?];
        for p in &self.peers {
            pids.push(p.pid?);
        }
        pids.sort_unstable();
        pids.dedup();
        pids.into_iter().map(sys::cpu_secs).sum()
    }
}
