use k8s_client_derive::Schema;

#[derive(Schema)]
pub enum Source {
    Url(String),
    Inline { text: String },
}

fn main() {}
