#!/usr/bin/env bash
# Kept for existing callers: runs the repository's fuzz targets (this
# crate's and the generator's) through scripts/fuzz.sh.
#   FUZZ_SECONDS=60 runtime/fuzz/run.sh [target...]
exec "$(dirname "$0")/../../scripts/fuzz.sh" "$@"
