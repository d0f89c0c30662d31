# Real kube-apiserver for tests (see testenv/README.md).
.PHONY: testenv-build apiserver apiserver-stop specs
testenv-build:
	@echo "testenv: not yet available" >&2; exit 1
