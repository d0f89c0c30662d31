use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Clash {
    pub max_size: i32,
    #[schema(rename = "maxSize")]
    pub limit: i32,
}

fn main() {}
