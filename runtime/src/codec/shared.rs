//! Decoded strings that repeat across objects share one heap buffer.
//!
//! Most strings of a Kubernetes object fit a [`LeanString`]'s 16 inline
//! bytes and cost no allocation. Of the longer ones, most are the same in
//! thousands of cached objects: image names and digests, mount paths,
//! toleration and annotation keys, owner UIDs, node names, defaulted values
//! such as `/dev/termination-log` or `PreemptLowerPriority`. Each decoding
//! thread keeps the last such strings it decoded in a small direct-mapped
//! table; a string found there is cloned, which shares its buffer (a
//! reference count) instead of allocating a copy.
//!
//! The table is bounded ([`SLOTS`] strings of at most [`MAX_LEN`] bytes per
//! thread, about 16 KB of slots plus the strings themselves) and a
//! collision only replaces a slot, so input cannot make lookups slow or the
//! table grow. A string stays alive while a slot holds it, until another
//! string takes that slot. Watch events, decoded one object at a time, share
//! with the objects decoded before them on the same thread.

use std::cell::RefCell;

use lean_string::LeanString;

/// Strings up to this length live inline in a [`LeanString`]: nothing to share.
const INLINE: usize = 2 * size_of::<usize>();
/// Longer strings are rarely repeated, and the table should not keep large
/// values alive.
const MAX_LEN: usize = 256;
/// Slots per thread; a power of two.
const SLOTS: usize = 1024;

thread_local! {
    static RECENT: RefCell<Vec<Option<LeanString>>> = const { RefCell::new(Vec::new()) };
}

/// `text` as a [`LeanString`], sharing the buffer of an equal string this
/// thread decoded recently when the text is too long to be held inline.
pub fn shared(text: &str) -> LeanString {
    if text.len() <= INLINE || text.len() > MAX_LEN {
        return LeanString::from(text);
    }
    let slot = slot_of(text.as_bytes());
    RECENT
        .try_with(|recent| {
            let mut recent = recent.try_borrow_mut().ok()?;
            if recent.is_empty() {
                recent.resize(SLOTS, None);
            }
            match &recent[slot] {
                Some(hit) if hit.as_str() == text => Some(hit.clone()),
                _ => {
                    let fresh = LeanString::from(text);
                    recent[slot] = Some(fresh.clone());
                    Some(fresh)
                }
            }
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| LeanString::from(text))
}

/// The slot of a string longer than [`INLINE`]: a hash of its length and
/// of its first and last eight bytes, where strings of one kind differ
/// (`kube-api-access-x7k2p`, a UID, an image tag). Equal strings always
/// meet; different ones that collide only replace each other in the table,
/// so input cannot slow lookups down. With `foldhash` over the whole
/// string, [`shared`] was 5.6% of a `PodList` decode's profile; 4.5% with
/// this.
fn slot_of(bytes: &[u8]) -> usize {
    let (Some((head, _)), Some((_, tail))) = (bytes.split_first_chunk::<8>(), bytes.split_last_chunk::<8>()) else {
        return 0;
    };
    let mixed = u64::from_le_bytes(*head) ^ u64::from_le_bytes(*tail).rotate_left(29) ^ bytes.len() as u64;
    // Fibonacci hashing: the top bits of the product are the best mixed.
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_long_string_shares_its_buffer() {
        let image = "registry.example.com/team/web:1.2.3";
        let a = shared(image);
        let b = shared(image);
        assert_eq!(a, image);
        assert_eq!(b, image);
        assert_eq!(a.as_ptr(), b.as_ptr(), "the second decode reuses the first buffer");
        // A copy made without the table has its own buffer.
        assert_ne!(LeanString::from(image).as_ptr(), a.as_ptr());
    }

    #[test]
    fn short_and_very_long_strings_are_not_kept() {
        let short = shared("Running");
        assert_eq!(short, "Running");
        let long = "x".repeat(MAX_LEN + 1);
        let (a, b) = (shared(&long), shared(&long));
        assert_eq!(a, long.as_str());
        assert_ne!(a.as_ptr(), b.as_ptr(), "a string over MAX_LEN is copied each time");
    }

    #[test]
    fn a_collision_replaces_the_slot_and_values_stay_right() {
        // More distinct strings than slots: every one still reads back as
        // itself, whatever the table evicted.
        let texts: Vec<String> = (0..SLOTS * 3).map(|i| format!("kube-api-access-{i:08}")).collect();
        for text in texts.iter().chain(&texts) {
            assert_eq!(shared(text), text.as_str());
        }
    }

    #[test]
    fn a_shared_string_changed_by_its_owner_is_copied_first() {
        let key = "node.kubernetes.io/unreachable";
        let mut mine = shared(key);
        mine.push_str("-x");
        assert_eq!(shared(key), key, "the table's copy is unchanged");
        assert_eq!(mine, "node.kubernetes.io/unreachable-x");
    }
}
