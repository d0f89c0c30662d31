# Real kube-apiserver for tests (see testenv/README.md). Included by the
# top-level Makefile, so paths are relative to the repository root.
.PHONY: testenv-build apiserver apiserver-stop apiserver-status specs proto-testdata testenv-test

GO ?= go
TESTENV_DIR ?= $(CURDIR)/.testenv
TESTENV_BIN := $(TESTENV_DIR)/bin/kube-testenv
# kubectl of the same Kubernetes release, beside kube-testenv, for the
# integration tests that check files both write (the discovery cache).
KUBECTL_BIN := $(TESTENV_DIR)/bin/kubectl

# The Kubernetes version comes from testenv/go.mod only; everything else is
# derived: v1.35.8 -> major 1, minor 35, specs dir 1.35.
K8S_VERSION := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2; exit }' testenv/go.mod)
K8S_MAJOR := $(word 1,$(subst ., ,$(patsubst v%,%,$(K8S_VERSION))))
K8S_MINOR := $(word 2,$(subst ., ,$(patsubst v%,%,$(K8S_VERSION))))
SPECS_OUT ?= specs/kubernetes/$(K8S_MAJOR).$(K8S_MINOR)
# Extra `kube-testenv specs` flags. Upstream's committed api/openapi-spec is
# made with enums off: SPECS_ARGS=--feature-gates=AllAlpha=true,AllBeta=true,OpenAPIEnums=false
SPECS_ARGS ?=

# The release commit, from the module proxy's metadata (cached by Go); lazy
# (=) so it is only looked up when building. Empty if unavailable.
K8S_COMMIT = $(shell cd testenv && info=$$($(GO) mod download -json k8s.io/kubernetes 2>/dev/null | sed -n 's/.*"Info": "\(.*\)".*/\1/p') && \
	[ -n "$$info" ] && sed -n 's/.*"Hash":"\([0-9a-f]*\)".*/\1/p' "$$info")

TESTENV_LDFLAGS = $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(pkg).gitVersion=$(K8S_VERSION) -X $(pkg).gitMajor=$(K8S_MAJOR) -X $(pkg).gitMinor=$(K8S_MINOR) \
	-X $(pkg).gitTreeState=clean -X $(pkg).gitCommit=$(K8S_COMMIT))

TESTENV_SRC := testenv/go.mod testenv/go.sum testenv/testenv.mk $(wildcard testenv/cmd/kube-testenv/*.go)

testenv-build: $(TESTENV_BIN) $(KUBECTL_BIN)

# -trimpath keeps this machine's paths out of the binary; Go's build cache
# makes a rebuild after a small edit take seconds.
$(TESTENV_BIN): $(TESTENV_SRC)
	@mkdir -p $(dir $@)
	@echo "testenv: building kube-testenv with kube-apiserver $(K8S_VERSION) (first build takes several minutes)"
	@cd testenv && $(GO) build -trimpath -ldflags '$(TESTENV_LDFLAGS)' -o $@.tmp ./cmd/kube-testenv \
		|| { echo "testenv: building kube-testenv failed (see the Go errors above)" >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# A `tool` of testenv/go.mod, so its modules are pinned there with the rest.
$(KUBECTL_BIN): testenv/go.mod testenv/go.sum testenv/testenv.mk
	@mkdir -p $(dir $@)
	@echo "testenv: building kubectl $(K8S_VERSION)"
	@cd testenv && $(GO) build -trimpath -ldflags '$(TESTENV_LDFLAGS)' -o $@.tmp k8s.io/kubernetes/cmd/kubectl \
		|| { echo "testenv: building kubectl failed (see the Go errors above)" >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

apiserver: testenv-build
	@$(TESTENV_BIN) start --detach --state-dir $(TESTENV_DIR)

apiserver-stop:
	@if [ -x $(TESTENV_BIN) ]; then $(TESTENV_BIN) ctl --state-dir $(TESTENV_DIR) stop; \
	else echo "testenv: not built, nothing to stop"; fi

apiserver-status: testenv-build
	@$(TESTENV_BIN) ctl --state-dir $(TESTENV_DIR) status

# `make specs KUBERNETES=v1.36.3` captures another release's inputs into
# specs/kubernetes/1.36/ with a testenv of that release built on the side
# (scripts/specs-release.sh); the pinned one stays as it is.
KUBERNETES ?=
ifeq ($(KUBERNETES),)
specs: testenv-build
	$(TESTENV_BIN) specs $(SPECS_ARGS) --out $(SPECS_OUT)
else
specs:
	GO=$(GO) scripts/specs-release.sh $(KUBERNETES) $(SPECS_ARGS)
endif

# Reference protobuf (and JSON) bytes of the Go types for the round-trip tests.
PROTO_TESTDATA_IN ?= ../shared/testdata/kubernetes-1.34
PROTO_TESTDATA_OUT ?= target/proto-testdata

proto-testdata: testenv-build
	$(TESTENV_BIN) proto-testdata --in $(PROTO_TESTDATA_IN) --out $(PROTO_TESTDATA_OUT)

testenv-test: testenv-build
	cd testenv && $(GO) test -trimpath ./...  # -trimpath shares the build's cache
	$(CARGO) test -p k8s-client-testenv
