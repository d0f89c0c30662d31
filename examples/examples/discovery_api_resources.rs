//! Prints the served resources as `kubectl api-resources` does: NAME,
//! SHORTNAMES, APIVERSION, NAMESPACED, KIND (preferred versions, no
//! subresources).

use k8s_client_runtime::Report;
use k8s_client_runtime::discovery::DiscoveryClient;
use k8s_client_runtime::rest::Client;

#[tokio::main]
async fn main() -> Result<(), Report> {
    let discovery = DiscoveryClient::new(Client::try_default()?);
    let mut resources = discovery.preferred_resources().await?;
    resources.retain(|r| !r.is_subresource());
    resources.sort_by(|a, b| (&a.group, &a.name).cmp(&(&b.group, &b.name)));
    let mut rows = vec![["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"].map(String::from)];
    for r in &resources {
        let api_version = if r.group.is_empty() { r.version.clone() } else { format!("{}/{}", r.group, r.version) };
        rows.push([r.name.clone(), r.short_names.join(","), api_version, r.namespaced.to_string(), r.kind.clone()]);
    }
    let widths: Vec<usize> = (0..5).map(|c| rows.iter().map(|row| row[c].len()).max().unwrap_or(0)).collect();
    for row in &rows {
        let line: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        println!("{}", line.join("   ").trim_end());
    }
    Ok(())
}
