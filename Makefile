# Top-level tasks. `make generate` and `make test` are the two a newcomer needs.
SHELL := /bin/bash
CARGO ?= cargo
# The workspace's dev profile (Cargo.toml), for the standalone crates built
# into its target directory too, so they reuse its dependencies.
export CARGO_PROFILE_DEV_DEBUG := line-tables-only

# Default spec input: the project's own capture (make specs), else the shared copy.
OWN_SPECS := $(lastword $(sort $(wildcard specs/kubernetes/*/api/v1.json)))
ifneq ($(OWN_SPECS),)
SPECS ?= $(patsubst %/api/v1.json,%,$(OWN_SPECS))
else
SPECS ?= ../shared/specs/kubernetes/1.35
endif
OUT ?= generated

GEN := target/release/k8s-client-gen

.PHONY: generate generator crd test lint check-features check-generated check-releases check-package check-crds check-readme check-public-crds bench bench-build bench-crd bench-peers bench-smoke peers-build fuzz fmt

generator:
	$(CARGO) build --release -p k8s-client-gen

# The committed crate names the runtime relatively; any other output names
# this checkout's runtime absolutely and builds as its own workspace.
ifeq ($(OUT),generated)
GEN_FLAGS := --runtime-path ../runtime
else
GEN_FLAGS := --runtime-path "$(CURDIR)/runtime" --standalone
endif

# The custom resource of the integration tests, on the committed crate.
TEST_CRD_ARGS := crd --crds integration/crds --crate-name k8s-client-test-widgets \
	--runtime-path ../../runtime --client-path ../../generated
# The custom resource of the greeting_operator example.
EXAMPLE_CRD_ARGS := crd --crds examples/crds --crate-name k8s-client-example-greetings \
	--runtime-path ../../runtime --client-path ../../generated

generate: generator
	$(GEN) --specs "$(SPECS)" --out "$(OUT)" $(GEN_FLAGS)
ifeq ($(OUT),generated)
	$(GEN) $(TEST_CRD_ARGS) --out integration/widgets
	$(GEN) $(EXAMPLE_CRD_ARGS) --out examples/greetings
endif

# A crate for the custom resources of CRD manifests:
#   make crd CRDS=<file-or-dir>... OUT=<dir> [NAME=<crate>] [GROUP_NAMES="<group>=<name>..."]
# It names this checkout's runtime and generated crate by path and builds on
# its own (`cargo build` in OUT). A group's accessor is its whole name
# (`operator.tigera.io/v1` is `operator_tigera_io_v1()`) unless
# GROUP_NAMES names it (`operator.tigera.io=tigera` gives `tigera_v1()`).
crd: generator
	@if [ -z "$(CRDS)" ] || [ "$(origin OUT)" = "file" ]; then \
		echo "usage: make crd CRDS=<file-or-dir>... OUT=<dir> [NAME=<crate>] [GROUP_NAMES=\"<group>=<name>...\"]" >&2; exit 2; fi
	$(GEN) crd --crds $(CRDS) --out "$(OUT)" $(if $(NAME),--crate-name "$(NAME)") \
		$(foreach g,$(GROUP_NAMES),--group-name "$(g)") \
		--runtime-path "$(CURDIR)/runtime" --client-path "$(CURDIR)/generated" --standalone

# Fails when the committed generated/ differs from what the generator makes.
check-generated: generator
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	same() { diff -r "$$1" "$$2" >/dev/null || { echo "$$2 is stale: run 'make generate' and commit" >&2; diff -r "$$1" "$$2" | head -20; exit 1; }; } && \
	$(GEN) --specs "$(SPECS)" --out "$$tmp/generated" --runtime-path ../runtime && same "$$tmp/generated" generated && \
	$(GEN) $(TEST_CRD_ARGS) --out "$$tmp/widgets" && same "$$tmp/widgets" integration/widgets && \
	$(GEN) $(EXAMPLE_CRD_ARGS) --out "$$tmp/greetings" && same "$$tmp/greetings" examples/greetings

# Regenerating for another release stays a tested path: the crates of the
# older captured releases (RELEASES, from specs/kubernetes/<release>)
# generate and build; the golden crates build with and without their apply
# configurations.
RELEASES ?= 1.35 1.36
check-releases: generator
	@set -e; for release in $(RELEASES); do \
		out="target/generated-$$release"; rm -rf "$$out"; \
		$(GEN) --specs "specs/kubernetes/$$release" --out "$$out" --runtime-path "$(CURDIR)/runtime" --standalone; \
		cp Cargo.lock "$$out/Cargo.lock"; \
		(cd "$$out" && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet); \
	done
	cd generator/tests/golden/small && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet
	cd generator/tests/golden/small && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet --features apply
	cd generator/tests/golden/crds && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet
	cd generator/tests/golden/crds && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet --features apply

# The three published crates as `cargo package` makes them (sizes on
# stdout), and the user project examples/crd-build-script built on them
# outside the workspace, its build.rs generating its client, run against a
# real apiserver (scripts/check-package.sh).
check-package: testenv-build
	CARGO=$(CARGO) TESTENV_BIN=$(TESTENV_BIN) scripts/check-package.sh

# Every CRD set in ../shared/crds generates a crate that compiles (with the
# workspace's Cargo.lock, so it builds offline with the same versions).
SHARED_CRDS ?= $(wildcard ../shared/crds/*)
check-crds: generator
	@test -n "$(SHARED_CRDS)" || { echo "check-crds: no CRD sets under ../shared/crds" >&2; exit 1; }
	@set -e; for dir in $(SHARED_CRDS); do \
		name=$$(basename "$$dir"); out="target/crds/$$name"; \
		$(GEN) crd --crds "$$dir" --out "$$out" --crate-name "$$name-client" \
			--runtime-path "$(CURDIR)/runtime" --client-path "$(CURDIR)/generated" --standalone; \
		cp Cargo.lock "$$out/Cargo.lock"; \
		(cd "$$out" && CARGO_TARGET_DIR="$(CURDIR)/target" $(CARGO) build --quiet); \
	done

# The README's code as a user takes it: its custom-resource commands run as
# written, and a program with its dependency lines and Rust blocks builds.
check-readme: generator
	scripts/check-readme.sh

# The public operators' CRDs (scripts/public-crds/corpus.txt, fetched from the
# Go module proxy): each is created with dryRun=All on a real apiserver
# (testenv); every accepted one must generate, every refused one must be a
# generator error naming file and pointer; then one crate holding every
# operator's CRDs is built, and a program using it beside the built-in crate
# (both preludes in scope). Summary on stdout, details in
# target/public-crds/report.md. About 5 minutes warm, 12 on a fresh machine.
check-public-crds: testenv-build
	@start=$$(date +%s) && \
	scripts/public-crds/fetch.sh target/public-crds/corpus && \
	$(CARGO) build --quiet --release -p k8s-client-public-crds && \
	target/release/check-public-crds --corpus target/public-crds/corpus --work target/public-crds \
		--runtime-path runtime --client-path generated --lockfile Cargo.lock --target-dir target \
		--known-failures scripts/public-crds/known-failures.txt && \
	echo "check-public-crds: $$(( $$(date +%s) - start )) s in all"

test: testenv-build
	$(MAKE) lint
	$(MAKE) check-generated
	$(MAKE) proto-testdata
	$(CARGO) test --workspace --all-targets
	$(MAKE) check-releases
	$(MAKE) check-package
	$(MAKE) check-crds
	$(MAKE) check-readme
	$(MAKE) check-public-crds
	$(MAKE) bench-smoke

# Figures: decode throughput and heap (vs k8s-openapi), runtime pipelines,
# and clean build times (vs k8s-openapi). Slow: minutes, not seconds.
bench:
	$(CARGO) bench -p k8s-client-bench --bench decode
	$(CARGO) bench -p k8s-client-runtime -- --measurement-time 3 --warm-up-time 1
	$(MAKE) bench-build

bench-build:
	scripts/bench-build.sh

# This project, client-go and kube-rs side by side on one test apiserver
# (bench/peers/PROTOCOL.md): a table on stdout, target/bench/peers.{json,svg}.
# The operator workload runs each stack's Greeting operator: ours is the
# example greeting_operator, client-go's is on controller-runtime.
# PROFILE=dev builds the programs without optimisation (the smoke run).
PROFILE ?= release
PEER_DIR = $(if $(filter dev,$(PROFILE)),debug,release)
PEERS = --ours target/$(PEER_DIR)/k8s-client-peer --client-go target/bench/bin/client-go-peer \
	--kube-rs target/peers/$(PEER_DIR)/kube-rs-peer \
	--ours-operator target/$(PEER_DIR)/examples/greeting_operator \
	--controller-runtime target/bench/bin/controller-runtime-operator \
	--kube-rs-operator target/peers/$(PEER_DIR)/kube-rs-operator

peers-build: testenv-build
	$(CARGO) build --profile $(PROFILE) -p k8s-client-bench --bins
	$(CARGO) build --profile $(PROFILE) -p k8s-client-examples --example greeting_operator
	cd bench/peers/client-go && $(GO) build -trimpath -o "$(CURDIR)/target/bench/bin/client-go-peer" .
	cd bench/peers/controller-runtime && $(GO) build -trimpath -o "$(CURDIR)/target/bench/bin/controller-runtime-operator" .
	cd bench/peers/kube-rs && CARGO_TARGET_DIR="$(CURDIR)/target/peers" $(CARGO) build --quiet --locked --profile $(PROFILE)

BENCH_PEERS_ARGS ?= --clean-builds

bench-peers: peers-build
	target/$(PEER_DIR)/bench-peers $(PEERS) $(BENCH_PEERS_ARGS)

# Every workload of bench-peers at 1/100 scale, once, so the harness and the
# three programs keep working; the figures mean nothing.
bench-smoke:
	$(MAKE) bench-peers PROFILE=dev \
		BENCH_PEERS_ARGS="--scale 0.01 --runs 1 --build-profile dev --out target/bench/smoke"

# Generation time and lines for ../shared/crds; the Gateway API crate's
# clean release build beside kopium's output (installed from crates.io).
bench-crd:
	scripts/bench-crd.sh

# Bounded fuzzing of every decoder of untrusted input: watch streams,
# kubeconfigs, the JSON codec of generated kinds, CRD manifests and OpenAPI
# documents (installs cargo-fuzz if missing): FUZZ_SECONDS per target,
# default 60; see scripts/fuzz.sh.
fuzz:
	scripts/fuzz.sh

fmt:
	$(CARGO) fmt --all

# House rules: the handwritten tree is formatted (generated crates carry a
# rustfmt.toml that leaves them as generated), and clippy and rustdoc are
# clean. The lints themselves are `[workspace.lints]` in Cargo.toml, so a
# plain `cargo clippy` or `cargo doc` reports the same; here their warnings
# are denied.
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps
	$(MAKE) check-features

# The runtime with no feature and with each feature alone, and the
# generated crate with its parts off (client only, then with informers):
# a missing or wrong `cfg` fails here, where the workspace build, which
# turns every feature on, would not see it.
RUNTIME_FEATURES := workqueue informers events leader-election ws socks5 metrics fake controller
check-features:
	$(CARGO) clippy --quiet -p k8s-client-runtime --no-default-features -- -D warnings
	@set -e; for f in $(RUNTIME_FEATURES); do \
		echo "check-features: k8s-client-runtime --features $$f"; \
		$(CARGO) clippy --quiet -p k8s-client-runtime --no-default-features --features $$f -- -D warnings; \
	done
	$(CARGO) clippy --quiet -p k8s-client --no-default-features -- -D warnings
	$(CARGO) clippy --quiet -p k8s-client --no-default-features --features core -- -D warnings
	$(CARGO) clippy --quiet -p k8s-client --no-default-features --features core,informers -- -D warnings
	$(CARGO) clippy --quiet -p k8s-client --no-default-features --features derive,apply -- -D warnings
	$(CARGO) clippy --quiet -p k8s-client-gen -- -D warnings
	$(CARGO) clippy --quiet -p k8s-client-gen --no-default-features -- -D warnings

include testenv/testenv.mk
