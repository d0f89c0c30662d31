use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Range {
    pub bounds: (i32, i32),
}

fn main() {}
