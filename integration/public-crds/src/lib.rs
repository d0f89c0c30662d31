//! The pieces of `check-public-crds` (see its `main.rs` and `make
//! check-public-crds`): [`corpus`] reads the operators' CRDs, [`apiserver`]
//! asks a real apiserver about each, [`generate`] runs the generator on
//! them, [`bigcrate`] builds one crate of every operator, [`side_by_side`]
//! builds a program using it beside the built-in crate, [`known`] reads the
//! failures being fixed elsewhere, and [`report`] tells what happened.

pub mod apiserver;
pub mod bigcrate;
pub mod corpus;
pub mod generate;
pub mod known;
pub mod report;
pub mod side_by_side;

use std::path::PathBuf;

use crate::apiserver::Verdict;
use crate::corpus::Crd;
use crate::generate::Failure;

/// What became of one CRD.
#[derive(Debug)]
pub struct Checked<'a> {
    /// The CRD.
    pub crd: &'a Crd,
    /// The apiserver's answer.
    pub verdict: Verdict,
    /// Its own file, as the generator read it.
    pub file: PathBuf,
    /// The generator's answer: `Ok` when it did what the verdict asks
    /// (generated an accepted CRD, refused a refused one naming file and
    /// pointer), else what went wrong.
    pub generator: Result<(), String>,
    /// The generator's error on a refused CRD.
    pub generator_error: Option<Failure>,
}

/// What the many-operator crate held and how its build went.
#[derive(Debug, Default)]
pub struct ManyOperatorCrate {
    /// The operators in it.
    pub members: Vec<String>,
    /// Operators with accepted CRDs whose own set does not generate (a
    /// failure of the run already), so not in it.
    pub not_generating: Vec<String>,
    /// CRDs left out because an earlier operator ships one of the same name.
    pub duplicates: Vec<bigcrate::Duplicate>,
    /// CRDs in it.
    pub crds: usize,
    /// Types it defines.
    pub types: usize,
    /// Where it was written.
    pub dir: PathBuf,
    /// Its build, unless `--no-build`.
    pub build: Option<bigcrate::Build>,
    /// The generator's failure on the whole set, if it failed.
    pub failure: Option<String>,
    /// The program using it beside the built-in crate, once planned.
    pub side_by_side: Option<SideBySide>,
}

/// The program using the many-operator crate beside the built-in crate.
#[derive(Debug)]
pub struct SideBySide {
    /// What it calls.
    pub program: side_by_side::Program,
    /// Where it was written.
    pub dir: PathBuf,
    /// Its build, once the many-operator crate built.
    pub build: Option<bigcrate::Build>,
}
