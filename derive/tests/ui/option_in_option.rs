use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Maybe {
    pub value: Option<Option<String>>,
}

fn main() {}
