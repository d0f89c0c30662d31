use k8s_client_derive::CustomResource;

#[derive(CustomResource)]
#[resource(version = "v1", kind = "Greeting", namespaced)]
pub struct GreetingSpec {
    pub message: String,
}

fn main() {}
