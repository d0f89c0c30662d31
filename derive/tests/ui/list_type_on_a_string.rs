use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Tagged {
    #[schema(list_type = "set")]
    pub tag: String,
}

fn main() {}
