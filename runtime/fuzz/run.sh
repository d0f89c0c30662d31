#!/usr/bin/env bash
# Runs every cargo-fuzz target of the runtime for a bounded time and
# reports executions and crashes. Installs cargo-fuzz if it is missing.
#   FUZZ_SECONDS=60 runtime/fuzz/run.sh [target...]
set -euo pipefail
cd "$(dirname "$0")"

SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz from crates.io..."
    cargo install cargo-fuzz --locked
fi

# libFuzzer needs nightly-only sanitizer flags. Use an installed nightly;
# otherwise let stable pretend (RUSTC_BOOTSTRAP) — works for these targets.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    TOOLCHAIN=(+nightly)
else
    echo "no nightly toolchain: using stable with RUSTC_BOOTSTRAP=1"
    TOOLCHAIN=()
    export RUSTC_BOOTSTRAP=1
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo "${TOOLCHAIN[@]}" fuzz list)
fi

status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    log="$(mktemp)"
    echo "== $t: ${SECONDS_PER_TARGET}s"
    if cargo "${TOOLCHAIN[@]}" fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -max_len=65536 >"$log" 2>&1; then
        result="no crashes"
    else
        result="CRASH (see fuzz/artifacts/$t)"
        status=1
        tail -n 40 "$log"
    fi
    runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -n1 || true)"
    echo "== $t: ${runs:-runs unknown}; $result"
    rm -f "$log"
done
exit "$status"
