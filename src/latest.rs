//! [`Latest`]: the newest value of something one task publishes and others read now and then.
//!
//! A room publishes its lobby summary after every command, and the lobby's feed and `list_rooms`
//! read it when they look. Nobody waits for a change, so a channel's wake-ups are wasted work:
//! tokio's `watch` takes its waiter lists' locks (eight of them) on every send, which showed in
//! the rooms profile (docs/performance.md). This is a lock and a version number: a reader that
//! remembers the version it saw knows without locking whether anything changed since.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// A value with a version that moves on with every change.
#[derive(Debug, Default)]
pub struct Latest<T> {
    value: Mutex<T>,
    version: AtomicU64,
}

impl<T: Clone> Latest<T> {
    /// `value` at version 0.
    pub fn new(value: T) -> Latest<T> {
        Latest {
            value: Mutex::new(value),
            version: AtomicU64::new(0),
        }
    }

    /// Lets `change` edit the value in place; it returns whether it changed anything, and if
    /// so the version moves on.
    pub fn update(&self, change: impl FnOnce(&mut T) -> bool) {
        let mut value = self.value.lock();
        if change(&mut value) {
            // Under the lock, so that `get` returns a value with its own version.
            self.version.fetch_add(1, Ordering::Release);
        }
    }

    /// The current version, without locking.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// A copy of the value and its version.
    pub fn get(&self) -> (T, u64) {
        let value = self.value.lock();
        (value.clone(), self.version.load(Ordering::Acquire))
    }

    /// Reads the value in place.
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.value.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_moves_only_when_the_value_changes() {
        let l = Latest::new(1);
        assert_eq!(l.get(), (1, 0));
        l.update(|v| {
            *v = 2;
            true
        });
        assert_eq!(l.version(), 1);
        l.update(|_| false);
        assert_eq!(l.get(), (2, 1));
        assert_eq!(l.read(|v| *v * 10), 20);
    }

    #[test]
    fn a_reader_sees_each_change_once_by_its_version() {
        let l = std::sync::Arc::new(Latest::new(0u32));
        let writer = {
            let l = l.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    l.update(|v| {
                        *v += 1;
                        true
                    });
                }
            })
        };
        let mut seen = 0;
        let mut last = 0;
        while last < 1000 {
            if l.version() != seen {
                let (v, version) = l.get();
                // The value always matches its version: every change added one to both.
                assert_eq!(u64::from(v), version);
                assert!(v > last);
                (last, seen) = (v, version);
            }
        }
        writer.join().unwrap();
    }
}
