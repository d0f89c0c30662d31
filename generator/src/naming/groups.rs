//! Names of API group/versions: the accessor on the ClientSet and the
//! informer factory (`apps_v1`), which is also the name of its module
//! files (`clientset/apps_v1.rs`), and the prefix of its types
//! (`AppsV1Client`, `AppsV1Informers`).
//!
//! # The rule
//! 1. A group Kubernetes itself serves or has served, in any release
//!    ([`BUILTIN_GROUPS`]), is named by its first label, as client-go names
//!    it: `apps/v1` is `apps_v1`, `networking.k8s.io/v1` is
//!    `networking_v1`, the core group's `v1` is `core_v1`.
//! 2. Any other group (a custom resource's, an aggregated API's) is named
//!    by its whole name, every label in snake_case, joined by `_`:
//!    `monitoring.coreos.com/v1` is `monitoring_coreos_com_v1`, the
//!    VerticalPodAutoscaler's `autoscaling.k8s.io/v1` is
//!    `autoscaling_k8s_io_v1`, `3scale.net/v1alpha1` is
//!    `_3scale_net_v1alpha1`. Such a group has at least two labels (the
//!    apiserver requires a dot), so its name never equals one of rule 1:
//!    not today's, and not a future built-in group's, whose first label is
//!    one word. It depends on the group alone, so adding an operator to a
//!    crate never renames another's, and a crate of custom resources
//!    never shadows the built-in crate's accessors when both preludes are
//!    in scope.
//! 3. `--group-name <group>=<name>` ([`GroupNames::parse`]) names a group
//!    of rule 2 by `<name>` instead (`operator.tigera.io=tigera` makes
//!    `tigera_v1`): a snake_case word that is not the first label of a
//!    built-in group, which stay reserved.
//! 4. Two groups of one crate whose names still come out the same
//!    (`a-b.io` and `a.b-io`, or two overrides) are an error naming both
//!    and the flag, raised by the plan before anything is written.

use std::collections::BTreeMap;

use heck::ToUpperCamelCase;

use super::{escape, snake};

/// The API groups of the Kubernetes API server in any release, including
/// those only used in webhooks (`admission`, `imagepolicy`) and those
/// since removed (`extensions`, `settings`, `auditregistration`), and the
/// metrics APIs of `k8s.io/metrics`, which client-go names the same way.
pub const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admission.k8s.io",
    "admissionregistration.k8s.io",
    "apidiscovery.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "auditregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "custom.metrics.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "external.metrics.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "imagepolicy.k8s.io",
    "internal.apiserver.k8s.io",
    "metrics.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "settings.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Whether `group` is named by rule 1.
pub fn is_builtin(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// The name rule 1 gives a built-in group (`core` for the core group).
fn builtin_name(group: &str) -> String {
    if group.is_empty() { "core".to_owned() } else { snake(group.split('.').next().unwrap_or(group)) }
}

/// The names reserved for built-in groups: what rule 1 makes of each.
pub fn reserved_names() -> impl Iterator<Item = String> {
    BUILTIN_GROUPS.iter().map(|g| builtin_name(g))
}

/// Names given to groups by hand (`--group-name`), on top of the rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupNames {
    overrides: BTreeMap<String, String>,
}

impl GroupNames {
    /// Reads `<group>=<name>` pairs. A name must be a snake_case word
    /// (`[a-z][a-z0-9_]*`, not ending in `_`) that is not reserved for a
    /// built-in group, and a built-in group cannot be renamed.
    pub fn parse(pairs: &[String]) -> Result<GroupNames, String> {
        let mut overrides = BTreeMap::new();
        for pair in pairs {
            let Some((group, name)) = pair.split_once('=') else {
                return Err(format!("--group-name {pair:?}: expected <group>=<name>"));
            };
            if is_builtin(group) {
                return Err(format!("--group-name {pair:?}: {group} is a built-in group; its name is fixed"));
            }
            if let Some(e) = super::group_error(group, true) {
                return Err(format!("--group-name {pair:?}: {group:?} is not an API group name: {e}"));
            }
            let word = name.starts_with(|c: char| c.is_ascii_lowercase())
                && !name.ends_with('_')
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !word || escape(name.to_owned()) != name {
                return Err(format!(
                    "--group-name {pair:?}: {name:?} is not a snake_case word (lower case letters, digits and \
                     '_', starting with a letter) that is no Rust keyword"
                ));
            }
            if reserved_names().any(|r| r == name) {
                return Err(format!("--group-name {pair:?}: {name:?} is the name of a built-in group"));
            }
            if let Some(earlier) = overrides.insert(group.to_owned(), name.to_owned()) {
                return Err(format!("--group-name: {group} is named twice ({earlier:?} and {name:?})"));
            }
        }
        Ok(GroupNames { overrides })
    }

    /// The groups named by hand.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.overrides.keys().map(String::as_str)
    }

    /// Whether `group` is named by hand.
    pub fn is_overridden(&self, group: &str) -> bool {
        self.overrides.contains_key(group)
    }

    /// The group's name, without its version (`apps`,
    /// `monitoring_coreos_com`, or the name given by hand).
    pub fn group_name(&self, group: &str) -> String {
        if let Some(name) = self.overrides.get(group) {
            return name.clone();
        }
        if is_builtin(group) {
            return builtin_name(group);
        }
        let labels: Vec<String> = group.split('.').filter(|l| !l.is_empty()).map(snake).collect();
        labels.join("_")
    }

    /// Accessor and module name of a group/version (`apps_v1`,
    /// `monitoring_coreos_com_v1`).
    pub fn method(&self, group: &str, version: &str) -> String {
        escape(format!("{}_{}", self.group_name(group), snake(version)))
    }

    /// UpperCamelCase type-name prefix of a group/version (`AppsV1`,
    /// `MonitoringCoreosComV1`; `_3scaleNetV1alpha1`).
    pub fn type_prefix(&self, group: &str, version: &str) -> String {
        let camel = self.method(group, version).to_upper_camel_case();
        if camel.starts_with(|c: char| c.is_ascii_digit()) { format!("_{camel}") } else { camel }
    }
}
