//! Status conditions (`metav1.Condition`) set as apimachinery's
//! `meta.SetStatusCondition` sets them: `lastTransitionTime` moves only
//! when the condition's status does.

use std::ops::DerefMut;

use crate::codec::Timestamp;

/// A `metav1.Condition`: the generated crate's `Condition` implements it,
/// and so can a custom resource's own condition type.
pub trait StatusCondition: Clone + PartialEq {
    /// `type`, unique within a list of conditions (`Ready`).
    fn condition_type(&self) -> &str;
    /// `status`: `True`, `False` or `Unknown`.
    fn status(&self) -> &str;
    /// `lastTransitionTime`; `None` when unset (Go's zero time).
    fn last_transition_time(&self) -> Option<Timestamp>;
    /// Sets `lastTransitionTime`.
    fn set_last_transition_time(&mut self, time: Timestamp);
}

/// Sets `condition` in `conditions` (apimachinery's
/// `meta.SetStatusCondition`): a new type is added, with
/// `lastTransitionTime` now unless given; an existing one takes the new
/// status, reason, message and observedGeneration, and its
/// `lastTransitionTime` changes only when the status does (to the given
/// time, or now). Returns whether anything changed, so that a status is
/// written only when it did. `conditions` is a `Vec` or a
/// [`ThinVec`](crate::ThinVec), as generated status types hold them.
pub fn set_status_condition<C, L>(conditions: &mut L, mut condition: C) -> bool
where
    C: StatusCondition,
    L: DerefMut<Target = [C]> + Extend<C>,
{
    let Some(existing) = conditions.iter_mut().find(|c| c.condition_type() == condition.condition_type()) else {
        if condition.last_transition_time().is_none() {
            condition.set_last_transition_time(now());
        }
        conditions.extend([condition]);
        return true;
    };
    if existing.status() == condition.status() {
        match existing.last_transition_time() {
            Some(kept) => condition.set_last_transition_time(kept),
            None if condition.last_transition_time().is_none() => condition.set_last_transition_time(now()),
            None => {}
        }
    } else if condition.last_transition_time().is_none() {
        condition.set_last_transition_time(now());
    }
    if *existing == condition {
        return false;
    }
    *existing = condition;
    true
}

/// Now, in whole seconds: what `metav1.Now()` writes.
fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).unwrap_or_else(|_| Timestamp::now())
}

/// The condition of `condition_type`, if there is one
/// (`meta.FindStatusCondition`).
pub fn find_status_condition<'a, C: StatusCondition>(conditions: &'a [C], condition_type: &str) -> Option<&'a C> {
    conditions.iter().find(|c| c.condition_type() == condition_type)
}

/// Whether the condition of `condition_type` is there with status `True`
/// (`meta.IsStatusConditionTrue`).
pub fn is_status_condition_true<C: StatusCondition>(conditions: &[C], condition_type: &str) -> bool {
    find_status_condition(conditions, condition_type).is_some_and(|c| c.status() == "True")
}

/// Removes the condition of `condition_type`; whether there was one
/// (`meta.RemoveStatusCondition`).
pub fn remove_status_condition<C, L>(conditions: &mut L, condition_type: &str) -> bool
where
    C: StatusCondition,
    L: DerefMut<Target = [C]> + Extend<C> + Default + IntoIterator<Item = C>,
{
    if find_status_condition(conditions, condition_type).is_none() {
        return false;
    }
    let all = std::mem::take(conditions);
    conditions.extend(all.into_iter().filter(|c| c.condition_type() != condition_type));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Cond {
        kind: &'static str,
        status: &'static str,
        reason: &'static str,
        time: Option<Timestamp>,
    }

    impl StatusCondition for Cond {
        fn condition_type(&self) -> &str {
            self.kind
        }
        fn status(&self) -> &str {
            self.status
        }
        fn last_transition_time(&self) -> Option<Timestamp> {
            self.time
        }
        fn set_last_transition_time(&mut self, time: Timestamp) {
            self.time = Some(time);
        }
    }

    fn cond(status: &'static str, reason: &'static str, time: Option<i64>) -> Cond {
        Cond { kind: "Ready", status, reason, time: time.map(|s| Timestamp::from_second(s).unwrap()) }
    }

    #[test]
    fn a_new_type_is_added_stamped_now_unless_given_a_time() {
        let mut conditions = Vec::new();
        assert!(set_status_condition(&mut conditions, cond("True", "A", None)));
        assert!(conditions[0].time.is_some());
        let mut conditions = Vec::new();
        assert!(set_status_condition(&mut conditions, cond("True", "A", Some(100))));
        assert_eq!(conditions, [cond("True", "A", Some(100))]);
    }

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let mut conditions = vec![cond("True", "A", Some(100))];
        // Same status, new reason: reason taken, time kept.
        assert!(set_status_condition(&mut conditions, cond("True", "B", Some(200))));
        assert_eq!(conditions, [cond("True", "B", Some(100))]);
        // Nothing new: no change reported, so no status write.
        assert!(!set_status_condition(&mut conditions, cond("True", "B", None)));
        assert_eq!(conditions, [cond("True", "B", Some(100))]);
        // A new status: the given time, or now.
        assert!(set_status_condition(&mut conditions, cond("False", "C", Some(300))));
        assert_eq!(conditions, [cond("False", "C", Some(300))]);
        assert!(set_status_condition(&mut conditions, cond("True", "C", None)));
        assert!(conditions[0].time.unwrap() > Timestamp::from_second(300).unwrap());
    }

    #[test]
    fn find_true_and_remove() {
        let mut conditions = vec![cond("True", "A", Some(1)), Cond { kind: "Other", ..cond("False", "A", Some(1)) }];
        assert!(is_status_condition_true(&conditions, "Ready"));
        assert!(!is_status_condition_true(&conditions, "Other"));
        assert!(!is_status_condition_true(&conditions, "Missing"));
        assert!(remove_status_condition(&mut conditions, "Ready"));
        assert!(!remove_status_condition(&mut conditions, "Ready"));
        assert_eq!(find_status_condition(&conditions, "Other").map(|c| c.status), Some("False"));
    }
}
