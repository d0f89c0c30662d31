//! The `get` calls waiting for an item, kept under the queue's lock.
//!
//! A queue wakes a worker only when one waits: `add` to a queue whose
//! workers are all busy costs no atomic operation and no wake-up, and one
//! added item wakes at most one worker. (A `tokio::sync::Notify` would be
//! signalled on every add, and has a lock of its own.)
//!
//! And only one worker at a time is woken and not yet running: while one
//! is on its way, further adds wake nobody; the woken worker, when it takes
//! an item and leaves others queued, wakes the next. That is how tokio's
//! and Go's schedulers wake their threads (one searching thread at a time):
//! a burst of adds costs one wake-up instead of one per idle worker, and
//! workers that would find nothing, or only fight over the queue's lock,
//! stay asleep; as long as items remain, every worker taking one wakes
//! another, so all workers get to work on a backlog.

use std::collections::VecDeque;
use std::task::Waker;

/// Waiting `get` calls, oldest first, each known by its ticket.
#[derive(Default)]
pub(super) struct IdleWorkers {
    waiting: VecDeque<(u64, Waker)>,
    next_ticket: u64,
    /// Workers woken that have not looked at the queue yet.
    woken: usize,
}

impl IdleWorkers {
    /// Registers a `get` to be woken; returns its ticket.
    pub(super) fn register(&mut self, waker: &Waker) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket = self.next_ticket.wrapping_add(1);
        self.waiting.push_back((ticket, waker.clone()));
        ticket
    }

    /// Forgets `ticket`, whose `get` is looking at the queue or gone;
    /// returns whether it was still waiting (false: it was woken meanwhile,
    /// and is no longer on its way).
    pub(super) fn unregister(&mut self, ticket: u64) -> bool {
        match self.waiting.iter().position(|(t, _)| *t == ticket) {
            Some(at) => {
                self.waiting.remove(at);
                true
            }
            None => {
                self.woken = self.woken.saturating_sub(1);
                false
            }
        }
    }

    /// The waker of the oldest waiting `get`, which stops waiting, unless a
    /// woken worker is already on its way (see the module docs).
    pub(super) fn wake_one(&mut self) -> Option<Waker> {
        if self.woken > 0 {
            return None;
        }
        let (_, waker) = self.waiting.pop_front()?;
        self.woken += 1;
        Some(waker)
    }

    /// The wakers of all waiting `get` calls, which stop waiting.
    pub(super) fn take_all(&mut self) -> Wakers {
        self.woken += self.waiting.len();
        Wakers(self.waiting.drain(..).map(|(_, waker)| waker).collect())
    }
}

/// Wake-ups to deliver once the queue's lock is released.
#[derive(Default)]
#[must_use = "wake them after releasing the lock"]
pub(super) struct Wakers(Vec<Waker>);

impl Wakers {
    pub(super) fn push(&mut self, waker: Option<Waker>) {
        self.0.extend(waker);
    }

    pub(super) fn wake(self) {
        for waker in self.0 {
            waker.wake();
        }
    }
}
