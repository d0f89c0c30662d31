use std::collections::BTreeMap;

use k8s_client_derive::Schema;

#[derive(Schema)]
pub struct Ports {
    pub by_number: BTreeMap<u16, String>,
}

fn main() {}
