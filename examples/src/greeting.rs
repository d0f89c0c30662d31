//! The `Greeting` custom resource of the greeting examples, defined in
//! Rust with `#[derive(CustomResource)]`: the same CRD as
//! `examples/crds/greeting.yaml`, which the `greeting_operator` example
//! takes through the generator. `cargo run -p k8s-client-examples
//! --example greeting_crd` prints it as YAML.

use k8s_client::apimachinery::pkg::apis::meta::v1::Time;
use k8s_client::{CustomResource, Schema};

/// A greeting to keep in `replicas` ConfigMaps.
#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[resource(group = "example.com", version = "v1", kind = "Greeting", namespaced, status = "GreetingStatus")]
pub struct GreetingSpec {
    /// What the ConfigMaps say.
    pub message: String,
    /// How many ConfigMaps to keep.
    #[schema(default = 1, minimum = 0, maximum = 10)]
    pub replicas: Option<i32>,
}

/// What the operator last did.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct GreetingStatus {
    /// The generation of the spec the status is about.
    pub observed_generation: Option<i64>,
    /// The conditions, one per type.
    #[schema(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Option<Vec<GreetingCondition>>,
}

/// One condition of a greeting, as `metav1.Condition` but with its status
/// one of three values.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct GreetingCondition {
    /// The condition's type (`Ready`).
    #[schema(rename = "type")]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// The generation it was set for.
    pub observed_generation: Option<i64>,
    /// When the status last changed.
    pub last_transition_time: Time,
    /// Why, in one CamelCase word.
    pub reason: String,
    /// Why, for people.
    pub message: String,
}

/// Whether a condition holds.
#[derive(Schema, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConditionStatus {
    /// It holds.
    True,
    /// It does not.
    False,
    /// Not known.
    #[default]
    Unknown,
}

#[cfg(test)]
mod tests {
    use k8s_client_runtime::ResourceClient;
    use k8s_client_runtime::cache::SharedInformerFactory;
    use k8s_client_runtime::fake::FakeCluster;
    use k8s_client_runtime::rest::{GetOptions, Patch, PatchOptions, UpdateOptions};

    use super::*;

    /// A derived kind works on the fake cluster as a generated one does:
    /// created, patched, its status written through the subresource and
    /// seen by an informer.
    #[tokio::test]
    async fn the_derived_kind_works_on_the_fake_cluster() {
        let fake = FakeCluster::new();
        fake.register_with_status::<Greeting>();
        let greetings = ResourceClient::<Greeting>::namespaced(fake.client(), "default");
        let spec = GreetingSpec { message: "hello".into(), replicas: Some(2) };
        greetings.create(&Greeting::new("hi", spec), &Default::default()).await.unwrap();
        let patch = Patch::Merge(serde_json::json!({"spec": {"message": "hey"}}));
        let patched = greetings.patch("hi", &patch, &PatchOptions::default()).await.unwrap();
        assert_eq!(patched.spec.message, "hey");

        let mut with_status = patched.clone();
        with_status.status = Some(GreetingStatus { observed_generation: Some(2), conditions: None });
        greetings.update_status(&with_status, &UpdateOptions::default()).await.unwrap();
        let read = greetings.get("hi", &GetOptions::default()).await.unwrap();
        assert_eq!(read.status.and_then(|s| s.observed_generation), Some(2));

        let factory = SharedInformerFactory::new(fake.client(), std::time::Duration::from_secs(60));
        let lister = factory.informer_for::<Greeting>().lister();
        factory.start();
        factory.wait_for_cache_sync_within(std::time::Duration::from_secs(10)).await.unwrap();
        assert_eq!(lister.namespace("default").get("hi").unwrap().spec.message, "hey");
        factory.shutdown();
    }
}
