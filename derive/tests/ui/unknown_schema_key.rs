use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Limits {
    #[schema(minimun = 1)]
    pub count: i32,
}

fn main() {}
