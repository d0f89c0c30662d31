//! An in-memory fake apiserver (placeholder: the merge logic it calls).

// Called by the fake apiserver.
#[cfg_attr(not(test), allow(dead_code))]
mod merge;
