//! Lists page by page, as client-go's pager: what the reflector's list
//! step sends and how it recovers from an expired `continue` token.

use std::sync::Arc;

use super::TransformFn;
use crate::cache::list_watch::ListWatch;
use crate::codec::DecodeOptions;
use crate::object::Object;
use crate::rest::{self, ListOptions};

/// A whole list: its objects, prepared, and the resourceVersion to watch
/// from.
pub(super) struct Listed<K> {
    pub(super) items: Vec<Arc<K>>,
    pub(super) rv: String,
    /// It came in more than one page.
    pub(super) paginated: bool,
}

/// `obj` after the reflector's transform, ready to share.
pub(super) fn prepare<K>(transform: Option<&TransformFn<K>>, mut obj: K) -> Arc<K> {
    if let Some(t) = transform {
        t(&mut obj);
    }
    Arc::new(obj)
}

/// Lists at `rv`, `limit` objects a page (`None`: one page), decoded with
/// `decode`, each object through `transform`.
pub(super) async fn paged_list<K: Object + Send + Sync + 'static>(
    lw: Arc<dyn ListWatch<K>>,
    decode: DecodeOptions,
    transform: Option<TransformFn<K>>,
    rv: String,
    limit: Option<u32>,
) -> Result<Listed<K>, rest::Error> {
    let prepare = |o| prepare(transform.as_ref(), o);
    let first = ListOptions { resource_version: Some(rv), limit, ..ListOptions::default() };
    let mut opts = first.clone();
    let mut items = Vec::new();
    let mut paginated = false;
    loop {
        match lw.list_with(&opts, decode).await {
            Ok(page) => {
                items.extend(page.items.into_iter().map(prepare));
                match page.metadata.continue_.filter(|c| !c.is_empty()) {
                    Some(token) => {
                        paginated = true;
                        // Later pages come from the snapshot the token names;
                        // a resourceVersion with a token is an error.
                        opts = ListOptions { limit, continue_token: Some(token), ..ListOptions::default() };
                    }
                    None => {
                        let rv = page.metadata.resource_version.unwrap_or_default();
                        return Ok(Listed { items, rv, paginated });
                    }
                }
            }
            Err(e) if opts.continue_token.is_some() && e.is_resource_expired() => {
                // The snapshot was compacted between pages: start over
                // with one unpaged list (client-go `FullListIfExpired`).
                let full = ListOptions { limit: None, ..first };
                let page = lw.list_with(&full, decode).await?;
                let items = page.items.into_iter().map(prepare).collect();
                let rv = page.metadata.resource_version.unwrap_or_default();
                return Ok(Listed { items, rv, paginated });
            }
            Err(e) => return Err(e),
        }
    }
}
