//! The items a queue knows, in one table.
//!
//! client-go keeps a FIFO and two sets, `dirty` (needs processing) and
//! `processing` (held by a worker); a port that does the same hashes an item
//! up to seven times and copies it twice on its way through add/get/done.
//! Here every item has one slot holding the item and the same three facts
//! (how often it is in the FIFO, dirty, processing):
//!
//! - the FIFO holds slot numbers, so `get` finds its slot without hashing;
//! - the item is moved into its slot and cloned once, for the worker;
//! - slots live in a [`Slab`], so the burst of a big initial list is written
//!   and read in order;
//! - the index (a hash table) holds 8 bytes per item, the slot number and 32
//!   bits of the item's hash: it grows without reading a slot or an item,
//!   and a lookup compares an item only when those 32 bits match;
//! - `done` does not touch the index, which is as big as the queue and
//!   costs a cache miss per access once it outgrows the CPU caches: it finds
//!   the slot in a small table of the items being processed (one per busy
//!   worker), and leaves the index entry of a freed slot behind. A lookup
//!   skips such stale entries (their slot is vacant or holds another item).
//!   When the index is full and at least half stale, the next `add` clears
//!   it and puts back the live slots (those queued or processed) instead of
//!   growing it: a drain touches the index not at all, and a steady flow
//!   rebuilds a table of a few live entries now and then.
//!
//! So an item costs one lookup in the big index (at `add`), one small-table
//! insert and remove, a slot write and a slot read. The measured figures
//! are in the workqueue module's docs.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use slab::Slab;

use super::QueueItem;

/// Capacity (in items) above which an emptied table gives its memory back,
/// so a burst does not keep its peak allocated; below it, keeping the room
/// avoids growing again and again.
const RELEASE_ABOVE: usize = 4096;

/// Hashes items for [`Items`]; a copy lives outside the queue's lock so
/// that callers hash before taking it.
#[derive(Clone, Default)]
pub(super) struct ItemHasher(foldhash::fast::RandomState);

impl ItemHasher {
    /// The 32 bits of an item's hash that the tables keep.
    pub(super) fn hash<T: QueueItem>(&self, item: &T) -> u32 {
        // The high half: foldhash mixes best there.
        (self.0.hash_one(item) >> 32) as u32
    }
}

struct Slot<T> {
    item: T,
    hash: u32,
    /// How many times the slot's number is in the FIFO. One at most, except
    /// after `done` of an item that was queued but not handed out, which
    /// queues it once more (as client-go does; at most `u16::MAX` times).
    queued: u16,
    /// client-go's `dirty` set: the item needs (more) processing.
    dirty: bool,
    /// client-go's `processing` set: a worker holds the item.
    processing: bool,
}

impl<T> Slot<T> {
    fn is_unused(&self) -> bool {
        self.queued == 0 && !self.dirty && !self.processing
    }
}

/// An entry of the tables: a slot and the hash of its item.
#[derive(Clone, Copy)]
struct SlotRef {
    slot: u32,
    hash: u32,
}

/// The 64-bit hash the tables want from the 32 bits kept: a table picks a
/// bucket from the low bits and a tag from the top seven, so both come from
/// the kept bits.
fn table_hash(hash: u32) -> u64 {
    u64::from(hash) | (u64::from(hash) << 32)
}

/// What [`Items::done`] did.
pub(super) enum Done {
    /// The item was added while processed and is queued again.
    Requeued,
    /// No item is processed any more.
    Idle,
    /// Other items are still processed.
    Busy,
}

/// The FIFO and the dirty and processing sets of client-go's queue; see the
/// module docs.
pub(super) struct Items<T> {
    slots: Slab<Slot<T>>,
    /// Every live slot, found by the hash of its item, plus stale entries
    /// of freed slots (see the module docs).
    index: HashTable<SlotRef>,
    /// The slots being processed (the `processing` set).
    processing: HashTable<SlotRef>,
    /// Slot numbers in the order their items are handed out.
    queue: VecDeque<u32>,
}

impl<T> Items<T> {
    /// No items. All hashes given to one `Items` must come from one
    /// [`ItemHasher`].
    pub(super) fn new() -> Self {
        Items { slots: Slab::new(), index: HashTable::new(), processing: HashTable::new(), queue: VecDeque::new() }
    }

    /// Number of entries in the FIFO (client-go's queue length).
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Number of items being processed.
    pub(super) fn processing(&self) -> usize {
        self.processing.len()
    }
}

/// Whether `entry` is the live entry of `item`.
fn holds<T: PartialEq>(slots: &Slab<Slot<T>>, entry: SlotRef, item: &T, hash: u32) -> bool {
    entry.hash == hash && slots.get(entry.slot as usize).is_some_and(|slot| slot.hash == hash && slot.item == *item)
}

impl<T: QueueItem> Items<T> {
    /// client-go's `Add` (without the shutdown check) of `item`, whose
    /// [`ItemHasher::hash`] is `hash`: nothing if it is dirty; otherwise
    /// marks it dirty, calling `on_dirty`, and queues it unless it is being
    /// processed. Returns whether it was queued.
    ///
    /// # Panics
    ///
    /// If `u32::MAX` distinct items are already in the queue.
    pub(super) fn add(&mut self, item: T, hash: u32, on_dirty: impl FnOnce(&T)) -> bool {
        if self.index.len() == self.index.capacity() && self.index.len() >= 2 * self.slots.len() {
            self.purge_stale();
        }
        let Items { slots, index, queue, .. } = self;
        let key = match index.entry(table_hash(hash), |e| holds(slots, *e, &item, hash), |e| table_hash(e.hash)) {
            Entry::Occupied(entry) => {
                let key = entry.get().slot;
                let slot = &mut slots[key as usize];
                if slot.dirty {
                    return false;
                }
                on_dirty(&slot.item);
                slot.dirty = true;
                if slot.processing || slot.queued == u16::MAX {
                    return false;
                }
                slot.queued += 1;
                key
            }
            Entry::Vacant(entry) => {
                on_dirty(&item);
                let key = u32::try_from(slots.vacant_key()).expect("a work queue holds at most u32::MAX items");
                entry.insert(SlotRef { slot: key, hash });
                slots.insert(Slot { item, hash, queued: 1, dirty: true, processing: false });
                key
            }
        };
        queue.push_back(key);
        true
    }

    /// client-go's `Get` once an item is there: takes the first queued item,
    /// now processed and no longer dirty, calling `on_get`.
    pub(super) fn pop(&mut self, on_get: impl FnOnce(&T)) -> Option<T> {
        let key = self.queue.pop_front()?;
        let slot = &mut self.slots[key as usize];
        slot.queued -= 1;
        slot.dirty = false;
        if !slot.processing {
            slot.processing = true;
            let hash = slot.hash;
            self.processing.insert_unique(table_hash(hash), SlotRef { slot: key, hash }, |e| table_hash(e.hash));
        }
        let slot = &self.slots[key as usize];
        on_get(&slot.item);
        Some(slot.item.clone())
    }

    /// client-go's `Done` of `item`, whose [`ItemHasher::hash`] is `hash`:
    /// no longer processed; queued again if it is dirty. Also returns the
    /// queue's copy of the item if its slot was freed, for the caller to drop
    /// once it released the lock.
    pub(super) fn done(&mut self, item: &T, hash: u32) -> (Done, Option<T>) {
        let Items { slots, processing, .. } = self;
        let held = processing
            .find_entry(table_hash(hash), |e| holds(slots, *e, item, hash))
            .ok()
            .map(|entry| entry.remove().0.slot);
        let key = match held {
            Some(key) => {
                self.slots[key as usize].processing = false;
                Some(key)
            }
            // Not handed out: client-go still requeues it if it is dirty.
            None => self.find(item, hash),
        };
        if let Some(key) = key {
            let slot = &mut self.slots[key as usize];
            if slot.dirty {
                // Only `done` calls without `get` queue a slot more than once.
                if slot.queued < u16::MAX {
                    slot.queued += 1;
                    self.queue.push_back(key);
                    return (Done::Requeued, None);
                }
            } else if slot.is_unused() {
                let freed = self.free(key);
                return (self.activity(), Some(freed));
            }
        }
        (self.activity(), None)
    }

    fn activity(&self) -> Done {
        if self.processing.is_empty() { Done::Idle } else { Done::Busy }
    }

    /// The slot of `item`, whose hash is `hash`, if it has one.
    fn find(&self, item: &T, hash: u32) -> Option<u32> {
        self.index.find(table_hash(hash), |e| holds(&self.slots, *e, item, hash)).map(|e| e.slot)
    }

    /// Frees the unused slot `key`, leaving its index entry stale; returns
    /// its item.
    fn free(&mut self, key: u32) -> T {
        let item = self.slots.remove(key as usize).item;
        if self.slots.is_empty() && self.slots.capacity() > RELEASE_ABOVE {
            // Gives back the room a burst left behind.
            *self = Items::new();
        }
        item
    }

    /// Replaces the index by one of the live slots only: those queued and
    /// those processed (a dirty slot is one of them).
    fn purge_stale(&mut self) {
        let room = 2 * self.slots.len() + 16;
        if self.index.capacity() > 4 * room {
            // What a burst left behind.
            self.index = HashTable::with_capacity(room);
        } else {
            self.index.clear();
        }
        let Items { slots, index, processing, queue } = self;
        let queued = queue.iter().copied();
        let held = processing.iter().map(|e| e.slot).filter(|&key| slots[key as usize].queued == 0);
        for key in queued.chain(held) {
            let hash = slots[key as usize].hash;
            // A slot queued twice is met twice.
            if slots[key as usize].queued > 1 && index.find(table_hash(hash), |e| e.slot == key).is_some() {
                continue;
            }
            index.insert_unique(table_hash(hash), SlotRef { slot: key, hash }, |e| table_hash(e.hash));
        }
    }
}

#[cfg(test)]
mod tests;
