//! A one-shot stop request that the tasks it stops can wait on without taking a lock.
//!
//! Connection and room tasks `select!` on "have I been asked to stop?" beside their real work,
//! so that future is polled every time they wake: once per frame read, once per frame written,
//! once per room command. tokio's `watch::Receiver::changed` and `CancellationToken::cancelled`
//! lock a mutex on each such poll (a `Notify`'s waiter list), and the shutdown token's mutex is
//! one for the whole server, shared by every task on both worker threads. A [`Signal`] keeps its
//! value in a `OnceLock` and one `AtomicWaker` per waiting task: a poll is an atomic load and,
//! when the waker changed, a compare-and-swap (docs/performance.md, fix 9).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use futures::task::AtomicWaker;

/// Set once (the first [`Signal::raise`] wins); up to `N` tasks wait for it, each through its own
/// slot.
pub struct Signal<T, const N: usize> {
    value: OnceLock<T>,
    wakers: [AtomicWaker; N],
}

impl<T, const N: usize> Default for Signal<T, N> {
    fn default() -> Self {
        Signal {
            value: OnceLock::new(),
            wakers: std::array::from_fn(|_| AtomicWaker::new()),
        }
    }
}

impl<T, const N: usize> Signal<T, N> {
    /// Sets the value and wakes the waiting tasks. Returns false, and changes nothing, if it was
    /// already set.
    pub fn raise(&self, value: T) -> bool {
        let first = self.value.set(value).is_ok();
        if first {
            self.wakers.iter().for_each(AtomicWaker::wake);
        }
        first
    }

    /// The value, once raised.
    pub fn get(&self) -> Option<&T> {
        self.value.get()
    }

    /// Completes when the signal is raised. `slot` (below `N`) is the waiting task's own: two
    /// tasks waiting through one slot would each take the other's wake-up.
    pub fn raised(&self, slot: usize) -> Raised<'_, T, N> {
        Raised {
            signal: self,
            slot,
            registered: None,
        }
    }
}

/// The future of [`Signal::raised`].
pub struct Raised<'a, T, const N: usize> {
    signal: &'a Signal<T, N>,
    slot: usize,
    /// The waker last registered in the slot. Only `raise` takes it out again, and sets the
    /// value first, so while the value is unset and the task's waker is the same one, the slot
    /// already holds it: the poll is then one load and one comparison.
    registered: Option<Waker>,
}

impl<'a, T, const N: usize> Future for Raised<'a, T, N> {
    type Output = &'a T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'a T> {
        let signal = self.signal;
        if let Some(v) = signal.value.get() {
            return Poll::Ready(v);
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        signal.wakers[self.slot].register(cx.waker());
        self.registered = Some(cx.waker().clone());
        // Raised between the check and the registration: `raise` may have woken the old
        // waker, so look again.
        match signal.value.get() {
            Some(v) => Poll::Ready(v),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn the_first_raise_wins_and_wakes_every_slot() {
        let signal = Arc::new(Signal::<u16, 2>::default());
        let waiters: Vec<_> = (0..2)
            .map(|slot| {
                let s = signal.clone();
                tokio::spawn(async move { *s.raised(slot).await })
            })
            .collect();
        // Both tasks are parked on the signal before it is raised.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(waiters.iter().all(|w| !w.is_finished()));
        assert!(signal.raise(1001));
        assert!(!signal.raise(1000));
        for w in waiters {
            assert_eq!(w.await.unwrap(), 1001);
        }
        assert_eq!(signal.get(), Some(&1001));
        // Raised already: completes at once.
        assert_eq!(*signal.raised(0).await, 1001);
    }
}
