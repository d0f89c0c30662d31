//! Prints the CustomResourceDefinition of the `Greeting` kind defined in
//! Rust (`k8s_client_examples::greeting`), as YAML for `kubectl apply -f`
//! or a Helm chart:
//!
//! ```text
//! cargo run -p k8s-client-examples --example greeting_crd > greeting.yaml
//! ```

use k8s_client_examples::greeting::Greeting;

fn main() {
    print!("{}", Greeting::crd_yaml());
}
