#!/usr/bin/env bash
# Runs every cargo-fuzz target of the repository for a bounded time and
# reports, per target, executions, seconds, crashes and corpus size.
#
#   FUZZ_SECONDS=60 scripts/fuzz.sh [target...]
#
# FUZZ_SECONDS  time per target (default 60)
# FUZZ_RUNS     stop a target after this many executions instead, if sooner
# FUZZ_TIMEOUT  seconds one input may take before it counts as a crash (default 60)
# FUZZ_SANITIZER  address (default), or none for several times the
#               executions per second: the crates forbid unsafe code, so
#               AddressSanitizer watches only their dependencies' unsafe code
#
# Targets live in two cargo-fuzz crates, each its own workspace: the
# runtime's decoders (runtime/fuzz) and the generator's inputs
# (generator/fuzz). Each target starts from its committed seeds
# (<crate>/seeds/<target>/) plus what earlier runs kept in
# <crate>/corpus/<target>/ (not committed), with <crate>/dicts/<target>.dict
# when there is one. Crash inputs land in <crate>/artifacts/<target>/.
# Installs cargo-fuzz from crates.io if it is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CRATES=(runtime/fuzz generator/fuzz)

SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
TIMEOUT="${FUZZ_TIMEOUT:-60}"
SANITIZER=(-s "${FUZZ_SANITIZER:-address}")

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

wanted=("$@")
is_wanted() {
    [ ${#wanted[@]} -eq 0 ] && return 0
    local w
    for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
    return 1
}

status=0
found=()
summary=()
for crate in "${CRATES[@]}"; do
    cd "$ROOT/$crate"
    mapfile -t targets < <(cargo "${TOOLCHAIN[@]}" fuzz list)
    for t in "${targets[@]}"; do
        is_wanted "$t" || continue
        found+=("$t")
        mkdir -p "corpus/$t" "artifacts/$t"
        cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
        args=(-max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=65536
            -print_final_stats=1)
        [ -n "${FUZZ_RUNS:-}" ] && args+=(-runs="$FUZZ_RUNS")
        [ -f "dicts/$t.dict" ] && args+=(-dict="dicts/$t.dict")
        echo "== $crate $t: up to ${SECONDS_PER_TARGET}s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}"
        # Build first, so the time measured is fuzzing only.
        cargo "${TOOLCHAIN[@]}" fuzz build "${SANITIZER[@]}" "$t"
        before="$(find "artifacts/$t" -type f | wc -l)"
        log="$(mktemp)"
        start="$(date +%s)"
        if cargo "${TOOLCHAIN[@]}" fuzz run "${SANITIZER[@]}" "$t" "corpus/$t" -- "${args[@]}" >"$log" 2>&1; then
            result="ok"
        else
            result="CRASH"
            status=1
            tail -n 60 "$log"
        fi
        seconds=$(($(date +%s) - start))
        crashes=$(($(find "artifacts/$t" -type f | wc -l) - before))
        [ "$result" = CRASH ] && [ "$crashes" -eq 0 ] && crashes="?"
        execs="$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n1 || true)"
        # A crash ends the run before the final stats: take the last status line.
        [ -z "$execs" ] && execs="$(grep -Eo '^#[0-9]+' "$log" | tr -d '#' | tail -n1 || true)"
        corpus="$(find "corpus/$t" -type f | wc -l)"
        line="$(printf '%-18s %12s %8s %8s %8s %8s' "$t" "${execs:-?}" "$seconds" \
            "$([ -n "$execs" ] && [ "$seconds" -gt 0 ] && echo $((execs / seconds)) || echo '?')" "$crashes" "$corpus")"
        note=""
        [ "$crashes" != 0 ] && note=" (inputs in $crate/artifacts/$t)"
        echo "== $line  $result$note"
        summary+=("$line")
        rm -f "$log"
    done
done

for w in "${wanted[@]}"; do
    if ! printf '%s\n' "${found[@]}" | grep -qx "$w"; then
        echo "no fuzz target named $w" >&2
        status=1
    fi
done

printf '\n%-18s %12s %8s %8s %8s %8s\n' target executions seconds exec/s crashes corpus
printf '%s\n' "${summary[@]}"
exit "$status"
