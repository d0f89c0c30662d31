//! Generates `$OUT_DIR/notes.rs` from the CRD manifests in `crds/`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    k8s_client_gen::Builder::new("notes").crd("crds").generate()?;
    Ok(())
}
