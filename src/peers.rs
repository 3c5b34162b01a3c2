//! What the edge keeps per client address: the TCP connections open from it
//! (`limits.max_connections_per_ip`) and the WebSocket upgrades it may still make
//! (`limits.upgrades_per_ip_per_sec`, a token bucket per address, governor's keyed GCRA).
//!
//! An address is an IPv4 address or an IPv6 /64: one host is usually given a whole /64 and can
//! pick any address in it, so counting single IPv6 addresses would cap nothing. An IPv4 address
//! mapped into IPv6 (a dual-stack listener) counts as the IPv4 address.
//!
//! Both maps stay bounded by the addresses active now: a connection count is removed when it
//! falls to zero, and token buckets back at full are swept out as the map grows. This module
//! must never block or await: it runs before anything else on every accepted connection.

use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use governor::clock::{Clock, DefaultClock};
use governor::{Quota, RateLimiter};

use crate::config::Limits;

/// The upgrade limiter: one GCRA state per address.
type Limiter =
    RateLimiter<IpAddr, governor::state::keyed::DefaultKeyedStateStore<IpAddr>, DefaultClock>;

/// Below this many buckets the limiter is never swept: a sweep walks the whole map.
const SWEEP_FLOOR: usize = 1024;

/// The address a limit counts against: `ip` itself, or its /64 for IPv6.
pub fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !((1u128 << 64) - 1))),
        },
    }
}

/// Per-address counts and buckets of one server.
pub struct Peers {
    /// Open TCP connections per address; an address with none has no entry.
    open: Arc<DashMap<IpAddr, usize>>,
    /// `limits.max_connections_per_ip`; `None`: unlimited.
    max_open: Option<usize>,
    /// The upgrade buckets; `None`: unlimited.
    upgrades: Option<Limiter>,
    /// Size of the limiter at which it is next swept: twice its size after the last sweep, so
    /// that sweeping costs O(1) per upgrade however many addresses come.
    next_sweep: AtomicUsize,
}

/// One open connection counted against its address; dropping it gives the slot back.
#[derive(Debug)]
pub struct PeerSlot {
    /// The map it is counted in; `None` when addresses are not capped.
    open: Option<Arc<DashMap<IpAddr, usize>>>,
    key: IpAddr,
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let Some(open) = &self.open else {
            return;
        };
        if let Entry::Occupied(mut e) = open.entry(self.key) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }
}

impl Peers {
    /// The limits of `limits`.
    pub fn new(limits: &Limits) -> Peers {
        let upgrades = limits.upgrades_per_ip_per_sec.map(|rate| {
            // At most one token per nanosecond; the config refuses rates that would round to 0.
            let period = Duration::from_secs_f64(1.0 / rate).max(Duration::from_nanos(1));
            let burst = NonZeroU32::new(limits.upgrades_per_ip_burst).unwrap_or(NonZeroU32::MIN);
            let quota = Quota::with_period(period)
                .expect("a positive period")
                .allow_burst(burst);
            RateLimiter::keyed(quota)
        });
        Peers {
            open: Arc::new(DashMap::new()),
            max_open: limits.max_connections_per_ip,
            upgrades,
            next_sweep: AtomicUsize::new(SWEEP_FLOOR),
        }
    }

    /// Counts a new connection from `ip`, or `None` if its address already has
    /// `limits.max_connections_per_ip` open. Without a cap the address is not even recorded.
    pub fn admit(&self, ip: IpAddr) -> Option<PeerSlot> {
        let key = key(ip);
        let Some(max) = self.max_open else {
            return Some(PeerSlot { open: None, key });
        };
        let mut count = self.open.entry(key).or_insert(0);
        if *count >= max {
            // Never zero here (max >= 1), so the entry is not left empty.
            return None;
        }
        *count += 1;
        drop(count);
        Some(PeerSlot {
            open: Some(self.open.clone()),
            key,
        })
    }

    /// Takes one upgrade token of `ip`'s address; `Err` is how long until the next one.
    pub fn upgrade(&self, ip: IpAddr) -> Result<(), Duration> {
        let Some(limiter) = &self.upgrades else {
            return Ok(());
        };
        let result = limiter.check_key(&key(ip));
        if limiter.len() >= self.next_sweep.load(Relaxed) {
            limiter.retain_recent();
            limiter.shrink_to_fit();
            self.next_sweep
                .store((2 * limiter.len()).max(SWEEP_FLOOR), Relaxed);
        }
        result.map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Addresses with a connection open now (for tests of the bound).
    pub fn addresses(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn limits(extra: &str) -> Limits {
        Config::from_toml(&format!("[limits]\n{extra}"))
            .expect("config")
            .limits
    }

    #[test]
    fn ipv6_counts_per_64_and_mapped_v4_as_v4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(key(a), key(b));
        assert_ne!(key(a), key(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(key(mapped), "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn slots_are_capped_per_address_and_given_back() {
        let peers = Peers::new(&limits("max_connections_per_ip = 2"));
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        let one = peers.admit(ip).unwrap();
        let two = peers.admit(ip).unwrap();
        assert!(peers.admit(ip).is_none());
        let elsewhere = peers.admit(other).unwrap();
        drop(one);
        let three = peers.admit(ip).unwrap();
        assert_eq!(peers.addresses(), 2);
        drop((two, three, elsewhere));
        assert_eq!(peers.addresses(), 0, "no entry outlives its connections");
    }

    #[test]
    fn zero_means_unlimited() {
        let peers = Peers::new(&limits(
            "max_connections_per_ip = 0\nupgrades_per_ip_per_sec = 0",
        ));
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let _slots: Vec<_> = (0..1000).map(|_| peers.admit(ip).unwrap()).collect();
        assert_eq!(peers.addresses(), 0);
        assert!((0..1000).all(|_| peers.upgrade(ip).is_ok()));
    }

    #[test]
    fn upgrades_past_the_burst_wait() {
        let peers = Peers::new(&limits(
            "upgrades_per_ip_per_sec = 0.001\nupgrades_per_ip_burst = 3",
        ));
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..3 {
            peers.upgrade(ip).unwrap();
        }
        let wait = peers.upgrade(ip).unwrap_err();
        assert!(wait > Duration::from_secs(100), "{wait:?}");
        assert!(peers.upgrade("10.0.0.2".parse().unwrap()).is_ok());
    }
}
