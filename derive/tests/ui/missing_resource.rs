use k8s_client_derive::CustomResource;

#[derive(CustomResource)]
pub struct GreetingSpec {
    pub message: String,
}

fn main() {}
