//! The operating system side: file-descriptor limits, the loopback-only rule, and a server's
//! resident memory from `/proc`.

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{bail, Context};

/// Raises the soft limit on open files to the hard limit (10,000 connections need 10,000
/// descriptors on each side; the usual soft limit is 1,024). Returns the new soft limit.
pub fn raise_nofile() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("caro-loadgen: cannot raise RLIMIT_NOFILE: {e}");
            rlimit::Resource::NOFILE.get().map(|(s, _)| s).unwrap_or(0)
        }
    }
}

/// Resolves `target` and refuses anything that is not a loopback address: the generator only
/// ever loads a server on this machine.
pub fn loopback(target: &str) -> anyhow::Result<SocketAddr> {
    let addrs: Vec<SocketAddr> = target
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {target}"))?
        .collect();
    let Some(first) = addrs.first() else {
        bail!("{target} resolves to no address");
    };
    if let Some(bad) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        bail!("{target} resolves to {bad}, which is not a loopback address: refusing to load it");
    }
    Ok(*first)
}

/// The `host:port` of an address given as `host:port`, `http://host:port/...` or
/// `ws://host:port/...` (scripts/cluster prints URLs).
pub fn host_port(addr: &str) -> &str {
    let rest = addr.split_once("://").map_or(addr, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

/// Resident memory of process `pid` in bytes (`VmRSS` in `/proc/<pid>/status`).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// CPU time (user + system) process `pid` has used so far, from `/proc/<pid>/stat`. Unlike a
/// rate, CPU time per unit of work hardly changes when other processes share the cores, so it
/// is the steadier way to compare two servers on a busy machine.
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / clock_ticks() as f64)
}

/// Clock ticks per second (`getconf CLK_TCK`); 100 on Linux unless told otherwise.
fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100)
}

/// The process listening on TCP `port` (found through `/proc/net/tcp*` and `/proc/*/fd`), if
/// this user can see it.
pub fn pid_listening_on(port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is "HEXIP:HEXPORT", state 0A is LISTEN, inode is field 9.
            if f.len() > 9 && f[3] == "0A" {
                let p = f[1]
                    .rsplit(':')
                    .next()
                    .and_then(|h| u16::from_str_radix(h, 16).ok());
                if p == Some(port) {
                    inodes.push(format!("socket:[{}]", f[9]));
                }
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                if inodes.iter().any(|i| link.as_os_str() == i.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_targets_are_accepted() {
        assert!(loopback("127.0.0.1:8080").is_ok());
        assert!(loopback("[::1]:8080").is_ok());
        assert!(loopback("localhost:8080").is_ok());
        assert!(loopback("10.0.0.1:8080").is_err());
        assert!(loopback("192.168.1.1:80").is_err());
    }

    #[test]
    fn urls_of_scripts_cluster_give_their_host_and_port() {
        assert_eq!(host_port("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(host_port("http://127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(host_port("ws://[::1]:8080/ws"), "[::1]:8080");
        assert_eq!(host_port("http://localhost:80/"), "localhost:80");
    }

    #[test]
    fn finds_its_own_listener_and_memory() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(pid_listening_on(port), Some(std::process::id()));
        assert!(rss_bytes(std::process::id()).unwrap() > 0);
        assert!(cpu_secs(std::process::id()).is_some());
    }
}
