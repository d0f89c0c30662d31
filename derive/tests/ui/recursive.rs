use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Node {
    pub name: String,
    pub children: Vec<Box<Node>>,
}

fn main() {}
