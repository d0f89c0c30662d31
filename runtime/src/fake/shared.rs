//! The state every connection of the fake apiserver and the test share:
//! the tracker, what wakes watches, the recorded actions and the reactors.

use super::reactor::{Action, Reactor};
use super::tracker::Tracker;

/// What wakes watches.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Signal {
    /// The resourceVersion of the last write.
    pub rv: u64,
    /// Bumped to make watches that asked for bookmarks send one.
    pub bookmarks: u64,
    /// Bumped to end every open watch.
    pub closes: u64,
}

/// The state every connection and the test share.
pub(crate) struct Shared {
    pub tracker: parking_lot::Mutex<Tracker>,
    pub signal: tokio::sync::watch::Sender<Signal>,
    pub actions: parking_lot::Mutex<Vec<Action>>,
    pub reactors: parking_lot::RwLock<Vec<Reactor>>,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            tracker: parking_lot::Mutex::default(),
            signal: tokio::sync::watch::Sender::new(Signal::default()),
            actions: parking_lot::Mutex::default(),
            reactors: parking_lot::RwLock::default(),
        }
    }

    /// Wakes the watches after a write.
    pub(crate) fn notify(&self) {
        let rv = self.tracker.lock().rv;
        self.signal.send_if_modified(|s| {
            let changed = s.rv != rv;
            s.rv = rv;
            changed
        });
    }
}
