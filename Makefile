# Top-level tasks. `make generate` and `make test` are the two a newcomer needs.
SHELL := /bin/bash
CARGO ?= cargo

# Default spec input: the project's own capture (make specs), else the shared copy.
OWN_SPECS := $(lastword $(sort $(wildcard specs/kubernetes/*/api/v1.json)))
ifneq ($(OWN_SPECS),)
SPECS ?= $(patsubst %/api/v1.json,%,$(OWN_SPECS))
else
SPECS ?= ../shared/specs/kubernetes/1.35
endif
OUT ?= generated

GEN := target/release/k8s-client-gen

.PHONY: generate generator test test-unit check-generated bench fmt

generator:
	$(CARGO) build --release -p k8s-client-gen

generate: generator
	$(GEN) --specs "$(SPECS)" --out "$(OUT)" --runtime-path "$(CURDIR)/runtime"

# Fails when the committed generated/ differs from what the generator makes.
check-generated: generator
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GEN) --specs "$(SPECS)" --out "$$tmp/generated" --runtime-path "$(CURDIR)/runtime" --in-workspace && \
	diff -r "$$tmp/generated" generated >/dev/null || { echo "generated/ is stale: run 'make generate' and commit" >&2; diff -r "$$tmp/generated" generated | head -20; exit 1; }

test: testenv-build
	$(CARGO) test --workspace --all-targets
	$(MAKE) check-generated

bench:
	$(CARGO) bench --workspace

fmt:
	$(CARGO) fmt --all

include testenv/testenv.mk
