//! `k8s-client-gen`: generate a Rust client crate from apiserver OpenAPI v3
//! documents, from CRD manifests, or from a live cluster.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use k8s_client_gen::emit::Options;
use k8s_client_gen::naming::GroupNames;
use k8s_client_runtime::ErrorChain;

/// Generates a Rust Kubernetes client crate (types, ClientSet, listers,
/// informers) from kube-apiserver OpenAPI v3 documents (`--specs`), from
/// CustomResourceDefinition manifests (`crd`), or from a live cluster
/// (`cluster`).
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Directory of OpenAPI v3 documents in the apiserver layout (api/v1.json, apis/<group>/<version>.json).
    #[arg(long, required = true)]
    specs: Option<PathBuf>,
    #[command(flatten)]
    output: Output,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// A crate for the custom resources of CRD manifests (YAML or JSON; files
    /// or directories), on the Kubernetes crate for metadata and the like.
    Crd {
        /// CRD manifest files or directories (searched recursively).
        #[arg(long, required = true, num_args = 1..)]
        crds: Vec<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// A crate for the API a live cluster serves: its `/openapi/v3`
    /// documents, read with the runtime's client and kubeconfig. With only
    /// custom groups, the crate uses the Kubernetes crate for metadata and
    /// the like; with a built-in group, it holds everything.
    Cluster {
        /// Kubeconfig file (default: as the runtime resolves it: KUBECONFIG,
        /// ~/.kube/config, in-cluster).
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        /// Kubeconfig context (default: the current one).
        #[arg(long)]
        context: Option<String>,
        /// An API group to generate (`""` or `core` for the core group);
        /// repeat for several. Default: every group the cluster serves.
        #[arg(long = "group")]
        groups: Vec<String>,
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Args, Debug, Clone)]
struct Output {
    /// Output directory of the generated crate (replaced as a whole).
    #[arg(long, required = true)]
    out: Option<PathBuf>,
    /// Package name of the generated crate (default: `k8s-client` for
    /// --specs, `k8s-crds` for crd, `k8s-cluster` for cluster).
    #[arg(long)]
    crate_name: Option<String>,
    /// Version of the generated crate (default: for --specs, the
    /// Kubernetes release its VERSION file names, 1.37.2 giving 0.37.2;
    /// otherwise 0.1.0).
    #[arg(long)]
    crate_version: Option<String>,
    /// Path of the runtime crate, written into the generated Cargo.toml
    /// beside its version requirement (default: the version alone, as from
    /// crates.io).
    #[arg(long)]
    runtime_path: Option<String>,
    /// Path of the Kubernetes crate (`k8s-client`), written into the
    /// generated Cargo.toml of a custom-resource crate beside its version
    /// requirement (default: the version alone).
    #[arg(long)]
    client_path: Option<String>,
    /// Make the crate its own workspace, to build it outside this repository.
    #[arg(long)]
    standalone: bool,
    /// Name a group's accessor and modules by hand, `<group>=<name>`
    /// (`operator.tigera.io=tigera` gives `tigera_v1()`), instead of its
    /// whole name (`operator_tigera_io_v1()`); repeat for several groups.
    /// Built-in groups keep their names, which stay reserved.
    #[arg(long = "group-name", value_name = "GROUP=NAME")]
    group_names: Vec<String>,
}

impl Output {
    fn options(
        &self,
        default_name: &str,
        source_label: String,
        sources_in_label: bool,
    ) -> k8s_client_gen::Result<Options> {
        let group_names = GroupNames::parse(&self.group_names).map_err(k8s_client_gen::Error::Check)?;
        Ok(Options {
            crate_name: self.crate_name.clone().unwrap_or_else(|| default_name.to_owned()),
            crate_version: self.crate_version.clone(),
            runtime_path: self.runtime_path.clone(),
            standalone: self.standalone,
            source_label,
            sources_in_label,
            client_path: self.client_path.clone(),
            group_names,
        })
    }

    fn out(&self) -> PathBuf {
        self.out.clone().unwrap_or_default()
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One line: the error and each of its causes, none repeated.
            eprintln!("error: {}", ErrorChain(&e));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> k8s_client_gen::Result<String> {
    let (generated, out) = match &cli.command {
        None => {
            let specs = cli.specs.clone().unwrap_or_default();
            let opts = cli.output.options("k8s-client", k8s_client_gen::source_label(&specs), true)?;
            (k8s_client_gen::generate_from_dir(&specs, &opts)?, cli.output.out())
        }
        Some(Command::Crd { crds, output }) => {
            let opts = output.options("k8s-crds", k8s_client_gen::inputs_label(crds), false)?;
            (k8s_client_gen::generate_from_crds(crds, &opts)?, output.out())
        }
        Some(Command::Cluster { kubeconfig, context, groups, output }) => {
            let source = k8s_client_gen::cluster::Source {
                kubeconfig: kubeconfig.clone(),
                context: context.clone(),
                groups: groups.clone(),
            };
            let opts = output.options("k8s-cluster", String::new(), false)?;
            (k8s_client_gen::generate_from_cluster(&source, opts)?, output.out())
        }
    };
    k8s_client_gen::emit::write(&generated.output, &out)?;
    for note in &generated.notes {
        if note.starts_with("warning: ") {
            eprintln!("{note}");
        } else {
            eprintln!("note: {note}");
        }
    }
    Ok(format!(
        "generated {} types, {} resources, {} files into {}",
        generated.api.types.values().filter(|d| !d.external).count(),
        generated.api.resources.len(),
        generated.output.files.len(),
        out.display()
    ))
}
