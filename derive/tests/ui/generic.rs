use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Wrapper<T> {
    pub value: T,
}

fn main() {}
