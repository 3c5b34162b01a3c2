//! Fair search slots: the `search.max_concurrent` slots a bot search holds while it thinks,
//! handed out to players in turn rather than first come, first served.
//!
//! Every search waits under an [`Owner`]: the human of a game against a bot, or the creator of a
//! game between bots. Waiting searches queue per owner (first in, first out within an owner), and
//! a slot that frees goes to the waiting owner that holds the fewest slots, the one served least
//! recently among those (max-min fairness; with one search each, the round robin of Nagle's fair
//! queuing, RFC 970). One player's many bot games therefore wait behind each other, not in front
//! of a bystander: a bystander who holds no slot is served as soon as one frees, ahead of every
//! search queued by owners already holding one. And one owner holds at most
//! `search.slots_per_player` slots (all but one by default), so with two slots or more a
//! bystander finds one free: its bot waits for no running search either (unless as many other
//! players as there are slots are searching).
//!
//! A wait is cancellable: dropping it (a room that ends, a resignation) takes its place out of
//! the queue, and a slot handed to a wait that has just been dropped comes back at once.
//! This module never runs a search and knows nothing of rooms; the bot-vs-bot rule
//! (`search.bot_vs_bot_slots`) is a semaphore taken before a slot, in `bot/mod.rs`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Whose search it is, for taking turns: a player id (or, for a game between bots restored
/// after a restart, whose creator the store does not keep, its room id).
pub type Owner = Arc<str>;

/// The search slots and the searches waiting for one.
pub struct Slots {
    inner: Mutex<Inner>,
    /// Slots one owner may hold at once.
    per_owner: usize,
}

struct Inner {
    /// Slots nobody holds. Never above zero while a search waits (`dispatch` runs at every
    /// change), so a new search may take a free slot without jumping the queue.
    free: usize,
    /// Numbers the waits (to find one that is dropped) and the grants (to tell who was served
    /// least recently).
    clock: u64,
    /// Owners holding a slot or waiting for one; an owner with neither is forgotten.
    owners: HashMap<Owner, OwnerState>,
}

#[derive(Default)]
struct OwnerState {
    /// Slots held.
    running: usize,
    /// When it was last given a slot (`clock`), 0: never since it was last forgotten.
    served: u64,
    /// Waiting searches, oldest first, with their number.
    queue: VecDeque<(u64, oneshot::Sender<Slot>)>,
}

/// A slot, held while a search runs; dropping it hands the slot to the next owner in turn.
#[must_use = "the slot is given back when dropped"]
pub struct Slot {
    slots: Arc<Slots>,
    owner: Owner,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let grants = {
            let mut inner = self.slots.inner.lock();
            inner.free += 1;
            if let Some(o) = inner.owners.get_mut(&self.owner) {
                o.running -= 1;
                if o.running == 0 && o.queue.is_empty() {
                    inner.owners.remove(&self.owner);
                }
            }
            inner.dispatch(self.slots.per_owner)
        };
        Slots::grant(&self.slots, grants);
    }
}

impl Inner {
    /// Gives the free slots out in turn: each to the first waiting search of the waiting owner
    /// holding the fewest slots, served least recently, waiting longest. The senders are
    /// returned to be completed after the lock is let go (a `Slot` whose wait was dropped
    /// meanwhile is dropped there, and takes the lock to come back).
    fn dispatch(&mut self, per_owner: usize) -> Vec<(Owner, oneshot::Sender<Slot>)> {
        let mut grants = Vec::new();
        while self.free > 0 {
            let next = self
                .owners
                .iter()
                .filter(|(_, o)| o.running < per_owner)
                .filter_map(|(owner, o)| {
                    let (oldest, _) = o.queue.front()?;
                    Some(((o.running, o.served, *oldest), owner))
                })
                .min_by_key(|(key, _)| *key)
                .map(|(_, owner)| owner.clone());
            let Some(owner) = next else {
                break;
            };
            self.clock += 1;
            let o = self.owners.get_mut(&owner).expect("just found");
            let (_, tx) = o.queue.pop_front().expect("an owner with a search waiting");
            o.running += 1;
            o.served = self.clock;
            self.free -= 1;
            grants.push((owner, tx));
        }
        grants
    }

    /// Takes a wait out of the queue (it was dropped); nothing if it was served already.
    fn forget(&mut self, owner: &Owner, id: u64) {
        let Some(o) = self.owners.get_mut(owner) else {
            return;
        };
        o.queue.retain(|(i, _)| *i != id);
        if o.running == 0 && o.queue.is_empty() {
            self.owners.remove(owner);
        }
    }
}

/// Takes a waiting search out of the queue if it is dropped before being served.
struct Waiting<'a> {
    slots: &'a Slots,
    owner: &'a Owner,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.slots.inner.lock().forget(self.owner, self.id);
    }
}

impl Slots {
    /// `slots` slots, all free, of which one owner may hold `per_owner`.
    pub fn new(slots: usize, per_owner: usize) -> Arc<Slots> {
        Arc::new(Slots {
            per_owner: per_owner.max(1),
            inner: Mutex::new(Inner {
                free: slots,
                clock: 0,
                owners: HashMap::new(),
            }),
        })
    }

    /// Waits for a slot in `owner`'s turn; `None` if `cancel` fires first (the wait leaves the
    /// queue then, and nothing is held).
    pub async fn acquire(
        self: &Arc<Slots>,
        owner: &Owner,
        cancel: &CancellationToken,
    ) -> Option<Slot> {
        let (id, rx) = {
            let mut inner = self.inner.lock();
            inner.clock += 1;
            let now = inner.clock;
            let under_cap = inner
                .owners
                .get(owner)
                .map_or(true, |o| o.running < self.per_owner);
            let free = inner.free > 0 && under_cap;
            if free {
                inner.free -= 1;
            }
            let o = inner.owners.entry(owner.clone()).or_default();
            if free {
                o.running += 1;
                o.served = now;
                return Some(Slot {
                    slots: self.clone(),
                    owner: owner.clone(),
                });
            }
            let (tx, rx) = oneshot::channel();
            o.queue.push_back((now, tx));
            (now, rx)
        };
        // Declared after `rx`, so dropped before it: the wait leaves the queue first, then a
        // slot already sent to it (if any) is dropped with `rx` and goes back.
        let _waiting = Waiting {
            slots: self,
            owner,
            id,
        };
        tokio::select! {
            slot = rx => slot.ok(),
            _ = cancel.cancelled() => None,
        }
    }

    /// A slot for post-game analysis, the lowest priority there is: taken only when one is free,
    /// which means no search waits (`free` is never above zero while one does), never queued.
    /// The caller polls, and gives it back after each position's search, so a live search that
    /// arrives meanwhile waits for at most the rest of one position.
    pub fn try_idle(self: &Arc<Slots>, owner: &Owner) -> Option<Slot> {
        let mut inner = self.inner.lock();
        if inner.free == 0 {
            return None;
        }
        inner.free -= 1;
        inner.clock += 1;
        let now = inner.clock;
        let o = inner.owners.entry(owner.clone()).or_default();
        o.running += 1;
        o.served = now;
        Some(Slot {
            slots: self.clone(),
            owner: owner.clone(),
        })
    }

    fn grant(slots: &Arc<Slots>, grants: Vec<(Owner, oneshot::Sender<Slot>)>) {
        for (owner, tx) in grants {
            // A wait dropped since `dispatch` returns the slot: dropping it gives it back.
            let _ = tx.send(Slot {
                slots: slots.clone(),
                owner,
            });
        }
    }

    /// Searches waiting for a slot.
    #[cfg(test)]
    fn queued(&self) -> usize {
        self.inner
            .lock()
            .owners
            .values()
            .map(|o| o.queue.len())
            .sum()
    }

    /// Slots nobody holds (never above zero while a search waits).
    pub(super) fn free(&self) -> usize {
        self.inner.lock().free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn analysis_takes_only_a_free_slot_and_a_live_search_gets_it_back_first() {
        let slots = Slots::new(1, 1);
        let analysis: Owner = "analysis".into();
        let live: Owner = "alice".into();
        let held = slots.try_idle(&analysis).expect("the slot is free");
        assert!(slots.try_idle(&analysis).is_none(), "none left");
        // A live search queues behind the analysis' position ...
        let cancel = CancellationToken::new();
        let waiting = {
            let slots = slots.clone();
            let live = live.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { slots.acquire(&live, &cancel).await })
        };
        for _ in 0..100 {
            if slots.queued() == 1 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(slots.queued(), 1);
        // ... and gets the slot when the position is done: the analysis cannot take it back.
        drop(held);
        assert!(slots.try_idle(&analysis).is_none());
        let slot = waiting.await.unwrap().expect("served");
        drop(slot);
        assert_eq!(slots.free(), 1);
    }

    /// Queues `owners` in that order behind a held slot, releases it, and returns the order in
    /// which they were served (each gives its slot back at once).
    async fn served(slots: usize, owners: &[&str]) -> Vec<String> {
        let pool = Slots::new(slots, slots);
        let cancel = CancellationToken::new();
        let held: Vec<Slot> = {
            let mut v = Vec::new();
            for _ in 0..slots {
                v.push(pool.acquire(&"hog".into(), &cancel).await.unwrap());
            }
            v
        };
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (i, o) in owners.iter().enumerate() {
            let (waiter, cancel, order) = (pool.clone(), cancel.clone(), order.clone());
            let owner: Owner = (*o).into();
            tasks.push(tokio::spawn(async move {
                let slot = waiter.acquire(&owner, &cancel).await.unwrap();
                order.lock().push(format!("{owner}{i}"));
                tokio::task::yield_now().await;
                drop(slot);
            }));
            // Each wait is queued before the next one starts.
            while pool.queued() < i + 1 {
                tokio::task::yield_now().await;
            }
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(pool.free(), slots, "every slot came back");
        let order = order.lock().clone();
        order
    }

    /// The regression: first come, first served let one player's queued searches all run
    /// before a bystander's. Owners take turns: B, queued last, is served second.
    #[tokio::test]
    async fn owners_take_turns() {
        assert_eq!(
            served(1, &["A", "A", "A", "B"]).await,
            ["A0", "B3", "A1", "A2"]
        );
        assert_eq!(
            served(1, &["A", "A", "B", "C", "B", "A"]).await,
            ["A0", "B2", "C3", "A1", "B4", "A5"]
        );
    }

    /// A player holding slots waits behind one who holds none, even one who asked later: the
    /// bystander of a hog is served as soon as a slot frees.
    #[tokio::test]
    async fn an_owner_holding_no_slot_goes_first() {
        let pool = Slots::new(2, 2);
        let never = CancellationToken::new();
        let (a, b): (Owner, Owner) = ("A".into(), "B".into());
        let first = pool.acquire(&a, &never).await.unwrap();
        let _second = pool.acquire(&a, &never).await.unwrap();
        let mut a_waits = Box::pin(pool.acquire(&a, &never));
        let mut b_waits = Box::pin(pool.acquire(&b, &never));
        assert!(futures_poll_once(a_waits.as_mut()).await.is_none());
        assert!(futures_poll_once(b_waits.as_mut()).await.is_none());
        drop(first);
        let b_slot = futures_poll_once(b_waits.as_mut()).await.flatten();
        assert!(b_slot.is_some(), "B got the slot");
        assert!(
            futures_poll_once(a_waits.as_mut()).await.is_none(),
            "A still waits"
        );
    }

    /// One owner holds at most its share of the slots, even with one free: the free one is
    /// another owner's at once.
    #[tokio::test]
    async fn an_owner_holds_at_most_its_share() {
        let pool = Slots::new(2, 1);
        let never = CancellationToken::new();
        let (a, b): (Owner, Owner) = ("A".into(), "B".into());
        let first = pool.acquire(&a, &never).await.unwrap();
        let mut a_waits = Box::pin(pool.acquire(&a, &never));
        assert!(
            futures_poll_once(a_waits.as_mut()).await.is_none(),
            "A waits"
        );
        let b_slot = pool.acquire(&b, &never).await;
        assert!(b_slot.is_some(), "B took the free slot at once");
        drop(first);
        let a_slot = futures_poll_once(a_waits.as_mut()).await.flatten();
        assert!(a_slot.is_some(), "A's next search runs when its first ends");
    }

    /// Within one owner, and with several slots, searches keep their order.
    #[tokio::test]
    async fn one_owner_is_first_in_first_out() {
        assert_eq!(served(2, &["A", "A", "A"]).await, ["A0", "A1", "A2"]);
    }

    /// A wait that is cancelled leaves the queue, and the slot goes to the next one.
    #[tokio::test]
    async fn a_cancelled_wait_leaves_nothing_behind() {
        let pool = Slots::new(1, 1);
        let never = CancellationToken::new();
        let held = pool.acquire(&"A".into(), &never).await.unwrap();
        let cancel = CancellationToken::new();
        let gone = {
            let (pool, cancel) = (pool.clone(), cancel.clone());
            tokio::spawn(async move { pool.acquire(&"B".into(), &cancel).await.is_none() })
        };
        let next = {
            let pool = pool.clone();
            tokio::spawn(async move {
                while pool.queued() < 1 {
                    tokio::task::yield_now().await;
                }
                pool.acquire(&"C".into(), &CancellationToken::new())
                    .await
                    .is_some()
            })
        };
        while pool.queued() < 2 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
        assert!(gone.await.unwrap(), "the cancelled wait got nothing");
        assert_eq!(pool.queued(), 1, "and left the queue");
        drop(held);
        assert!(next.await.unwrap(), "the slot went to the next wait");
        assert_eq!((pool.queued(), pool.free()), (0, 1));
    }

    /// A slot sent to a wait that is dropped before it sees it comes back.
    #[tokio::test]
    async fn a_slot_sent_to_a_dropped_wait_comes_back() {
        let pool = Slots::new(1, 1);
        let never = CancellationToken::new();
        let held = pool.acquire(&"A".into(), &never).await.unwrap();
        let owner: Owner = "B".into();
        let mut wait = Box::pin(pool.acquire(&owner, &never));
        assert!(futures_poll_once(wait.as_mut()).await.is_none());
        drop(held); // sent to B's wait, which is never polled again
        drop(wait);
        assert_eq!((pool.queued(), pool.free()), (0, 1));
        assert!(pool.inner.lock().owners.is_empty(), "nobody is remembered");
    }

    /// Polls a future once; `Some` if it finished.
    async fn futures_poll_once<F: std::future::Future + Unpin>(mut f: F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
