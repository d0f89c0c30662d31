//! `k8s-client-gen`: generate the Rust client crate from apiserver OpenAPI v3 documents.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Directory of OpenAPI v3 documents in the apiserver layout (api/v1.json, apis/<group>/<version>.json).
    #[arg(long)]
    specs: PathBuf,
    /// Output directory of the generated crate (replaced as a whole).
    #[arg(long)]
    out: PathBuf,
    /// Path of the runtime crate as written into the generated Cargo.toml.
    #[arg(long, default_value = "../runtime")]
    runtime_path: String,
    /// Package name of the generated crate.
    #[arg(long, default_value = "k8s-client")]
    crate_name: String,
    /// Make the crate its own workspace, to build it outside this repository.
    #[arg(long)]
    standalone: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> k8s_client_gen::Result<String> {
    let opts = k8s_client_gen::emit::Options {
        crate_name: args.crate_name.clone(),
        runtime_path: args.runtime_path.clone(),
        standalone: args.standalone,
        source_label: k8s_client_gen::source_label(&args.specs),
    };
    let (api, output) = k8s_client_gen::generate_from_dir(&args.specs, &opts)?;
    k8s_client_gen::emit::write(&output, &args.out)?;
    Ok(format!(
        "generated {} types, {} resources, {} files into {}",
        api.types.len(),
        api.resources.len(),
        output.files.len(),
        args.out.display()
    ))
}
