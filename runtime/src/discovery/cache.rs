//! Discovery results on disk, shared between runs (kubectl keeps its own
//! in the same directory; our file has its own name so neither clobbers
//! the other).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::Discovery;
use crate::rest::Client;

/// kubectl's discovery cache lifetime.
pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

const FILE_NAME: &str = "k8s-client-rust-discovery.json";
#[cfg(test)]
pub(super) const FILE_NAME_FOR_TESTS: &str = FILE_NAME;

/// `~/.kube/cache/discovery/<host_port>`, the host and port made
/// filesystem-safe the way kubectl does it.
pub fn default_cache_dir(client: &Client) -> Option<PathBuf> {
    let base = client.base_url();
    let host = base.split_once("://").map_or(base.as_str(), |(_, rest)| rest);
    let safe: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    Some(home::home_dir()?.join(".kube").join("cache").join("discovery").join(safe))
}

#[derive(Clone, Debug)]
pub(super) struct DiskCache {
    dir: PathBuf,
    ttl: Duration,
}

impl DiskCache {
    pub fn new(dir: PathBuf, ttl: Duration) -> Self {
        DiskCache { dir, ttl }
    }

    fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// The cached result if present, fresh and readable; anything else is a
    /// miss (a cache must never make discovery fail).
    pub fn load(&self) -> Option<Discovery> {
        let path = self.path();
        let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
        let age = SystemTime::now().duration_since(modified).unwrap_or(Duration::ZERO);
        if age >= self.ttl {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(d) => Some(d),
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %crate::ErrorChain(&e), "ignoring unreadable discovery cache");
                None
            }
        }
    }

    /// Writes via a temporary file and rename so readers never see half a
    /// file. Only what succeeded is written: failed group/versions keep
    /// their names (so a reader asks them again) but never any resources.
    pub fn store(&self, d: &Discovery) {
        let mut stripped;
        let d = if d.failed.keys().any(|gv| d.resources.contains_key(gv)) {
            stripped = d.clone();
            stripped.resources.retain(|gv, _| !d.failed.contains_key(gv));
            &stripped
        } else {
            d
        };
        let result = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
            tmp.write_all(&serde_json::to_vec(d).map_err(std::io::Error::other)?)?;
            tmp.as_file().sync_all()?;
            tmp.persist(self.path()).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!(dir = %self.dir.display(), error = %crate::ErrorChain(&e), "could not write discovery cache");
        }
    }

    /// Rewrites the file with `d` but keeps its modification time, so the
    /// TTL still counts from the original discovery.
    pub fn update(&self, d: &Discovery) {
        let modified = std::fs::metadata(self.path()).and_then(|m| m.modified()).ok();
        self.store(d);
        if let Some(t) = modified {
            let result = std::fs::File::options().write(true).open(self.path()).and_then(|f| f.set_modified(t));
            if let Err(e) = result {
                tracing::debug!(dir = %self.dir.display(), error = %crate::ErrorChain(&e), "could not keep the discovery cache's age");
            }
        }
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_file(self.path());
    }
}
