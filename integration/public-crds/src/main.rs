//! `check-public-crds`: the public operators' CRDs (laid out by
//! `scripts/public-crds/fetch.sh`) against the real kube-apiserver and the
//! generator, then one crate holding every operator at once, built with
//! cargo, and a program using it beside the built-in crate. `make
//! check-public-crds` runs it; the summary goes to stdout, the details to
//! `<work>/report.md` and `<work>/results.tsv`.
//!
//! It requires that every CRD the apiserver accepts generates, that every
//! CRD it refuses is a generator error naming the file and the pointer,
//! and that the crate and the program build; it exits 1 otherwise.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;

use k8s_client_public_crds::apiserver::{self, Verdict};
use k8s_client_public_crds::corpus::{self, Crd};
use k8s_client_public_crds::generate::{self, Failure};
use k8s_client_public_crds::{Checked, ManyOperatorCrate, SideBySide, bigcrate, known, report, side_by_side};

/// The package name of the many-operator crate.
const CRATE_NAME: &str = "k8s-public-crds";
/// Its directory in the work directory, the root of its workspace.
const CRATE_DIR: &str = "crate";
/// The directory of the program using it beside the built-in crate.
const PROGRAM_DIR: &str = "side-by-side";

/// Checks the public CRD corpus against the apiserver and the generator.
#[derive(Parser, Debug)]
struct Cli {
    /// The corpus: one directory per operator (scripts/public-crds/fetch.sh).
    #[arg(long, default_value = "target/public-crds/corpus")]
    corpus: PathBuf,
    /// Where the per-CRD files, the crate and the report go.
    #[arg(long, default_value = "target/public-crds")]
    work: PathBuf,
    /// The runtime crate the generated crate depends on.
    #[arg(long, default_value = "runtime")]
    runtime_path: PathBuf,
    /// The Kubernetes crate (`k8s-client`) the generated crate depends on.
    #[arg(long, default_value = "generated")]
    client_path: PathBuf,
    /// The lock file the crate builds with (offline, the workspace's versions).
    #[arg(long, default_value = "Cargo.lock")]
    lockfile: PathBuf,
    /// Cargo's target directory for the crate's build.
    #[arg(long, default_value = "target")]
    target_dir: PathBuf,
    /// The kubeconfig of a running apiserver to ask, instead of starting a
    /// testenv of its own.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Failures known and being fixed elsewhere (`<origin> <why>` lines).
    #[arg(long)]
    known_failures: Option<PathBuf>,
    /// Generate the many-operator crate and the program beside the
    /// built-in crate, but build neither.
    #[arg(long)]
    no_build: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("check-public-crds: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<bool, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let known = match &cli.known_failures {
        Some(path) => known::Known::load(path)?,
        None => known::Known::default(),
    };
    let operators = corpus::load(&cli.corpus)?;
    let crds: Vec<&Crd> = operators.iter().flat_map(|o| &o.crds).collect();

    let asked = Instant::now();
    let verdicts = ask_apiserver(cli, &crds)?;
    let apiserver_time = asked.elapsed();

    let generating = Instant::now();
    generate::catch_panics();
    let accepted_dir = cli.work.join("accepted");
    let refused_dir = cli.work.join("refused");
    for dir in [&accepted_dir, &refused_dir] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    let mut checked = Vec::with_capacity(crds.len());
    for (crd, verdict) in crds.iter().zip(verdicts) {
        let dir = if verdict == Verdict::Accepted { &accepted_dir } else { &refused_dir };
        let file = corpus::write_alone(crd, dir)?;
        checked.push(Checked { crd, verdict, file, generator: Ok(()), generator_error: None });
    }
    let mut operator_failures = Vec::new();
    let mut generated_sets = Vec::new();
    for operator in &operators {
        let dir = accepted_dir.join(&operator.name);
        let mine: Vec<usize> = (0..checked.len())
            .filter(|&i| checked[i].crd.operator == operator.name && checked[i].verdict == Verdict::Accepted)
            .collect();
        if mine.is_empty() {
            continue;
        }
        match generate::run(std::slice::from_ref(&dir), &generate::check_options()) {
            Ok(_) => generated_sets.push(operator.name.clone()),
            Err(set_failure) => {
                // Which CRDs fail alone; if none does, the set's failure is the operator's.
                let mut alone = 0;
                for &i in &mine {
                    if let Err(f) = generate::run(std::slice::from_ref(&checked[i].file), &generate::check_options()) {
                        checked[i].generator = Err(describe(&f));
                        alone += 1;
                    }
                }
                if alone == 0 {
                    operator_failures.push(format!(
                        "{}: its CRDs generate one by one, not together: {}",
                        operator.name,
                        describe(&set_failure)
                    ));
                }
            }
        }
    }
    for c in checked.iter_mut().filter(|c| c.verdict != Verdict::Accepted) {
        match generate::run(std::slice::from_ref(&c.file), &generate::check_options()) {
            Ok(_) => c.generator = Err("generates, though the apiserver refuses it".into()),
            Err(f) if f.located => c.generator_error = Some(f),
            Err(f) => {
                c.generator = Err(format!("an error that does not name file and pointer: {}", describe(&f)));
                c.generator_error = Some(f);
            }
        }
    }
    let generate_time = generating.elapsed();

    let crate_report = many_operator_crate(cli, &operators, &checked, &generated_sets, &accepted_dir)?;
    let report = report::Report {
        operators: &operators,
        checked: &checked,
        operator_failures: &operator_failures,
        known: &known,
        many: &crate_report,
        apiserver_time,
        generate_time,
        total_time: start.elapsed(),
    };
    let details = report.write(&cli.work)?;
    print!("{}", report.summary());
    println!("details: {}", details.display());
    Ok(report.passed())
}

fn describe(f: &Failure) -> String {
    if f.panicked { format!("generator {}", f.message) } else { f.message.clone() }
}

/// The verdict on every CRD from a testenv started for the purpose (or the
/// apiserver `--kubeconfig` names).
fn ask_apiserver(cli: &Cli, crds: &[&Crd]) -> Result<Vec<Verdict>, Box<dyn std::error::Error>> {
    let env = cli.kubeconfig.is_none().then(k8s_client_testenv::TestEnv::start);
    let kubeconfig = cli.kubeconfig.clone().or_else(|| env.as_ref().map(|e| e.kubeconfig_path())).unwrap_or_default();
    let client = apiserver::client(&kubeconfig)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let verdicts = runtime.block_on(apiserver::dry_run(&client, crds))?;
    drop(env);
    Ok(verdicts)
}

/// Generates the crate of every operator's accepted CRDs (a duplicate of
/// an earlier operator's CRD aside), builds it, then builds the program
/// that uses it beside the built-in crate.
fn many_operator_crate(
    cli: &Cli,
    operators: &[corpus::Operator],
    checked: &[Checked],
    generated_sets: &[String],
    accepted_dir: &Path,
) -> Result<ManyOperatorCrate, Box<dyn std::error::Error>> {
    let accepted = |name: &str| -> Vec<&Crd> {
        checked.iter().filter(|c| c.crd.operator == name && c.verdict == Verdict::Accepted).map(|c| c.crd).collect()
    };
    let (mut candidates, mut not_generating) = (Vec::new(), Vec::new());
    for operator in operators {
        let crds = accepted(&operator.name);
        if generated_sets.contains(&operator.name) {
            candidates.extend(crds);
        } else if !crds.is_empty() {
            not_generating.push(operator.name.clone());
        }
    }
    let (taken, duplicates) = bigcrate::select(&candidates);
    let mut members: Vec<String> = taken.iter().map(|c| c.operator.clone()).collect();
    members.dedup();
    let mut out = ManyOperatorCrate {
        members,
        not_generating,
        duplicates,
        crds: taken.len(),
        dir: cli.work.join(CRATE_DIR),
        ..ManyOperatorCrate::default()
    };
    let input = cli.work.join("crate-crds");
    bigcrate::write_input(&taken, accepted_dir, &input)?;
    let absolute = |p: &Path| std::path::absolute(p);
    let client_path = absolute(&cli.client_path)?;
    let options = k8s_client_gen::emit::Options {
        crate_name: CRATE_NAME.into(),
        crate_version: None,
        runtime_path: Some(absolute(&cli.runtime_path)?.display().to_string()),
        // A member of the workspace of `<work>/Cargo.toml`.
        standalone: false,
        source_label: String::new(),
        sources_in_label: false,
        client_path: Some(client_path.display().to_string()),
        group_names: Default::default(),
    };
    let generated = match generate::run(std::slice::from_ref(&input), &options) {
        Ok(generated) => generated,
        Err(f) => {
            out.failure = Some(describe(&f));
            return Ok(out);
        }
    };
    out.types = generated.api.types.values().filter(|d| !d.external).count();
    k8s_client_gen::emit::write(&generated.output, &out.dir)?;
    let plan = k8s_client_gen::plan::plan(&generated.api, &options.group_names)?;
    let builtin = side_by_side::builtin_accessors(&cli.client_path)?;
    let program = side_by_side::Program::new(side_by_side::custom_group_versions(&plan), &builtin);
    // The builds need none of the generator's memory.
    drop(plan);
    drop(generated);
    let mut side = SideBySide { program, dir: cli.work.join(PROGRAM_DIR), build: None };
    side.program.write(&side.dir, &client_path, CRATE_NAME, &absolute(&out.dir)?)?;
    bigcrate::write_workspace(&cli.work, &[CRATE_DIR, PROGRAM_DIR], &cli.lockfile)?;
    if !cli.no_build {
        let target_dir = absolute(&cli.target_dir)?;
        let build = bigcrate::build(&out.dir, &target_dir, &side.program.cargo_features())?;
        if build.ok {
            side.build = Some(bigcrate::build(&side.dir, &target_dir, &[])?);
        }
        out.build = Some(build);
    }
    out.side_by_side = Some(side);
    Ok(out)
}
