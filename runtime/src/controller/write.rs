//! The writes controllers make: owner references, retries on conflict,
//! create-or-update (controller-runtime's `controllerutil`, client-go's
//! `util/retry`).

use std::future::Future;
use std::time::Duration;

use crate::object::{Metadata, Object, OwnerReference};
use crate::rest::verbs::{Create, Get, Update};
use crate::rest::{CreateOptions, Error, GetOptions, ResourceClient, UpdateOptions};
use crate::LeanString;

/// Why an owner reference could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OwnerReferenceError {
    /// The object already has another controller
    /// (controller-runtime's `AlreadyOwnedError`).
    #[error("{object} is already controlled by {} {}", .controller.kind, .controller.name)]
    AlreadyOwned {
        /// The object's name.
        object: String,
        /// Its controller.
        controller: OwnerReference,
    },
    /// The owner has no uid or no known type: it was never stored, or is a
    /// type that does not know its kind.
    #[error("the owner {owner} has no uid or kind to refer to: read it from the apiserver first")]
    OwnerNotStored {
        /// The owner's name, if it has one.
        owner: String,
    },
}

/// Makes `owner` the controller of `object` (controller-runtime's
/// `SetControllerReference`): adds the reference
/// [`OwnerReference::controller_of`] makes, or replaces one to the same
/// owner; fails if another object already controls `object`. Namespaced
/// owners must be in the object's namespace (the apiserver's garbage
/// collector ignores other references).
///
/// For an apply configuration, convert the reference instead:
/// `.with_owner_references([OwnerReference::controller_of(&owner).unwrap().into()])`.
pub fn set_controller_reference<O, C>(owner: &O, object: &mut C) -> Result<(), OwnerReferenceError>
where
    O: Object + ?Sized,
    C: Object + ?Sized,
{
    let Some(reference) = OwnerReference::controller_of(owner) else {
        return Err(OwnerReferenceError::OwnerNotStored { owner: owner.name().unwrap_or_default().to_owned() });
    };
    let group = crate::GroupVersion::parse(&reference.api_version).group.to_owned();
    let same_owner = |r: &OwnerReference| r.refers_to_kind(&group, &reference.kind) && r.name == reference.name;
    let mut references = object.metadata().owner_references().into_owned();
    let other = |c: &&OwnerReference| !same_owner(c);
    if let Some(controller) = references.iter().find(|r| r.is_controller()).filter(other) {
        return Err(OwnerReferenceError::AlreadyOwned {
            object: object.name().unwrap_or_default().to_owned(),
            controller: controller.clone(),
        });
    }
    match references.iter_mut().find(|r| same_owner(r)) {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
    object.metadata_mut().set_owner_references(references);
    Ok(())
}

/// The attempts of [`retry_on_conflict_with`]: `steps` tries, `duration`
/// apart at first, each wait `factor` times the one before, with up to
/// `jitter` of it added at random (client-go's `wait.Backoff`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryBackoff {
    /// Tries in all.
    pub steps: u32,
    /// The first wait.
    pub duration: Duration,
    /// Growth of each wait.
    pub factor: f64,
    /// Up to this fraction of a wait is added at random.
    pub jitter: f64,
}

impl RetryBackoff {
    /// client-go's `retry.DefaultRetry`: 5 tries 10 ms apart, 10 % jitter.
    pub const DEFAULT_RETRY: RetryBackoff =
        RetryBackoff { steps: 5, duration: Duration::from_millis(10), factor: 1.0, jitter: 0.1 };
    /// client-go's `retry.DefaultBackoff`: 4 tries, 10 ms growing fivefold.
    pub const DEFAULT_BACKOFF: RetryBackoff =
        RetryBackoff { steps: 4, duration: Duration::from_millis(10), factor: 5.0, jitter: 0.1 };
}

impl Default for RetryBackoff {
    fn default() -> Self {
        RetryBackoff::DEFAULT_RETRY
    }
}

/// Runs `attempt` again while it fails with a conflict (409: someone wrote
/// the object since it was read), with client-go's `DefaultRetry`
/// (`retry.RetryOnConflict`). Each attempt should read the object afresh,
/// change it and write it back.
pub async fn retry_on_conflict<T, F, Fut>(attempt: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    retry_on_conflict_with(RetryBackoff::DEFAULT_RETRY, attempt).await
}

/// [`retry_on_conflict`] with another backoff.
pub async fn retry_on_conflict_with<T, F, Fut>(backoff: RetryBackoff, mut attempt: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let mut retry = Retry::new(backoff);
    loop {
        match attempt().await {
            Err(e) if retry.again(&e).await => {}
            result => return result,
        }
    }
}

/// The waits between the attempts of one retry on conflict.
struct Retry {
    backoff: RetryBackoff,
    wait: Duration,
    left: u32,
}

impl Retry {
    fn new(backoff: RetryBackoff) -> Self {
        Retry { backoff, wait: backoff.duration, left: backoff.steps.max(1) - 1 }
    }

    /// After a failed attempt: waits and answers `true` when it was a
    /// conflict and attempts are left.
    async fn again(&mut self, error: &Error) -> bool {
        if !error.is_conflict() || self.left == 0 {
            return false;
        }
        self.left -= 1;
        let jitter = self.wait.mul_f64(self.backoff.jitter * rand::random::<f64>());
        tokio::time::sleep(self.wait + jitter).await;
        self.wait = self.wait.mul_f64(self.backoff.factor);
        true
    }
}

/// What [`create_or_update`] did (controller-runtime's `OperationResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// The object was not there and was created.
    Created,
    /// The object changed and was updated.
    Updated,
    /// `mutate` left the object as it was: nothing was written.
    Unchanged,
}

/// Reads the object `name`, lets `mutate` bring it to what it should be
/// and writes it back only if that changed anything; creates it (from
/// `K::default()` named `name`, then `mutate`) when missing
/// (controller-runtime's `CreateOrUpdate`). An update conflicting with
/// another writer is retried from a fresh read ([`retry_on_conflict`]).
pub async fn create_or_update<K>(
    client: &ResourceClient<K>,
    name: &str,
    mut mutate: impl FnMut(&mut K),
) -> Result<(K, Operation), Error>
where
    K: Get + Create + Update + Default + Clone + PartialEq,
{
    let mut retry = Retry::new(RetryBackoff::DEFAULT_RETRY);
    loop {
        match create_or_update_once(client, name, &mut mutate).await {
            Err(e) if retry.again(&e).await => {}
            result => return result,
        }
    }
}

async fn create_or_update_once<K>(
    client: &ResourceClient<K>,
    name: &str,
    mutate: &mut impl FnMut(&mut K),
) -> Result<(K, Operation), Error>
where
    K: Get + Create + Update + Default + Clone + PartialEq,
{
    let Some(current) = client.get_opt(name, &GetOptions::default()).await? else {
        let mut object = K::default();
        object.metadata_mut().set_name(Some(LeanString::from(name)));
        mutate(&mut object);
        let created = client.create(&object, &CreateOptions::default()).await?;
        return Ok((created, Operation::Created));
    };
    let mut object = current.clone();
    mutate(&mut object);
    if object == current {
        return Ok((current, Operation::Unchanged));
    }
    Ok((client.update(&object, &UpdateOptions::default()).await?, Operation::Updated))
}

/// Reads the object `name`, or creates `make()` when it is missing; a
/// creation racing with another is answered with the other's object
/// (`true` when this call created it).
pub async fn get_or_create<K>(client: &ResourceClient<K>, name: &str, make: impl FnOnce() -> K) -> Result<(K, bool), Error>
where
    K: Get + Create,
{
    if let Some(existing) = client.get_opt(name, &GetOptions::default()).await? {
        return Ok((existing, false));
    }
    match client.create(&make(), &CreateOptions::default()).await {
        Ok(created) => Ok((created, true)),
        Err(e) if e.is_already_exists() => Ok((client.get(name, &GetOptions::default()).await?, false)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Pod, pod};

    fn stored(name: &str, uid: &str) -> Pod {
        let mut p = pod("ns", name, "node");
        p.metadata.uid = Some(uid.to_owned());
        p
    }

    #[test]
    fn a_controller_reference_is_added_once_and_another_controller_refused() {
        let owner = stored("owner", "u1");
        let mut child = stored("child", "u2");
        set_controller_reference(&owner, &mut child).unwrap();
        set_controller_reference(&owner, &mut child).unwrap();
        let references = child.metadata.owner_references().into_owned();
        assert_eq!(references.len(), 1, "{references:?}");
        assert_eq!(
            (references[0].kind.as_str(), references[0].name.as_str(), references[0].uid.as_str()),
            ("Pod", "owner", "u1")
        );
        assert_eq!((references[0].controller, references[0].block_owner_deletion), (Some(true), Some(true)));

        let other = stored("other", "u3");
        let err = set_controller_reference(&other, &mut child).unwrap_err();
        assert!(matches!(err, OwnerReferenceError::AlreadyOwned { .. }), "{err}");
        let unsaved = pod("ns", "new", "node");
        let err = set_controller_reference(&unsaved, &mut stored("x", "u4")).unwrap_err();
        assert!(matches!(err, OwnerReferenceError::OwnerNotStored { .. }), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn conflicts_are_retried_up_to_the_steps_and_other_errors_at_once() {
        let conflict = || Error::Api(crate::rest::Status::from_http(409, b"", "PUT", "/x").into());
        let mut calls = 0;
        let result: Result<(), Error> = retry_on_conflict(|| {
            calls += 1;
            let e = conflict();
            async move { Err(e) }
        })
        .await;
        assert!(result.unwrap_err().is_conflict());
        assert_eq!(calls, 5);

        let mut calls = 0;
        let result = retry_on_conflict(|| {
            calls += 1;
            let answer = if calls < 3 { Err(conflict()) } else { Ok(calls) };
            async move { answer }
        })
        .await;
        assert_eq!(result.unwrap(), 3);

        let mut calls = 0;
        let result: Result<(), Error> = retry_on_conflict(|| {
            calls += 1;
            async { Err(Error::Api(crate::rest::Status::from_http(404, b"", "GET", "/x").into())) }
        })
        .await;
        assert!(result.unwrap_err().is_not_found());
        assert_eq!(calls, 1);
    }
}
