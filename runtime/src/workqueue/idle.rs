//! The `get` calls waiting for an item, kept under the queue's lock.
//!
//! A queue wakes a worker only when one waits: `add` to a queue whose
//! workers are all busy costs no atomic operation and no wake-up, and one
//! added item wakes at most one worker. (A `tokio::sync::Notify` would be
//! signalled on every add, and has a lock of its own.)

use std::collections::VecDeque;
use std::task::Waker;

/// Waiting `get` calls, oldest first, each known by its ticket.
#[derive(Default)]
pub(super) struct IdleWorkers {
    waiting: VecDeque<(u64, Waker)>,
    next_ticket: u64,
}

impl IdleWorkers {
    /// Registers a `get` to be woken; returns its ticket.
    pub(super) fn register(&mut self, waker: &Waker) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket = self.next_ticket.wrapping_add(1);
        self.waiting.push_back((ticket, waker.clone()));
        ticket
    }

    /// Forgets `ticket`; returns whether it was still waiting (false: it was
    /// woken meanwhile).
    pub(super) fn unregister(&mut self, ticket: u64) -> bool {
        match self.waiting.iter().position(|(t, _)| *t == ticket) {
            Some(at) => {
                self.waiting.remove(at);
                true
            }
            None => false,
        }
    }

    /// Number of waiting `get` calls.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// The waker of the oldest waiting `get`, which stops waiting.
    pub(super) fn take_one(&mut self) -> Option<Waker> {
        self.waiting.pop_front().map(|(_, waker)| waker)
    }

    /// The wakers of all waiting `get` calls, which stop waiting.
    pub(super) fn take_all(&mut self) -> Wakers {
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
