#!/usr/bin/env bash
# The nightly fuzzing commands, shared by the GitHub Actions workflow (ci/nightly-fuzz.yml) and
# the Kubernetes Indexed Job (ci/k8s/fuzz-indexed-job.yaml). docs/fuzzing.md explains the setup.
#   ci/fuzz_nightly.sh shard INDEX COUNT DURATION ROOT [HISTORY_DB]
#       builds gbcheck, then fuzzes shard INDEX/COUNT for DURATION into ROOT/shard-INDEX, starting
#       from a copy of HISTORY_DB (last night's merged store) so known bugs are recognised; a
#       shard killed midway continues with --resume when run again on the same ROOT. A shard that
#       completes leaves ROOT/shard-INDEX/DONE.
#   ci/fuzz_nightly.sh merge ROOT [JUNIT]
#       merges ROOT/shard-*/fuzz.db into ROOT/merged/fuzz.db, prints the report and writes JUnit
#       XML (default ROOT/junit.xml); exits 1 when there are new signatures. With
#       GBCHECK_FUZZ_WAIT_SHARDS=N it first waits until N shards are DONE (Kubernetes starts the
#       merge together with the shards).
# Environment: GBCHECK_FUZZ_BACKENDS (default gbc,nnc), GBCHECK_FUZZ_SEED (default: the day
# number times 10^9, so every night checks new graphs and every shard of a night the same space),
# GBCHECK_FUZZ_JOBS (default nproc).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/ci/lib/setup.sh"

usage() { sed -n '4,18p' "${BASH_SOURCE[0]}" >&2; exit 2; }
build_gbcheck() {
  gbcheck_install_deps
  gbcheck_build "$root/build" gbcheck
}
gbcheck_bin="$root/build/bin/gbcheck"

case "${1:-}" in
  shard)
    [ $# -ge 5 ] || usage
    index=$2 count=$3 duration=$4 out_root=$5 history=${6:-}
    build_gbcheck
    out="$out_root/shard-$index"
    mkdir -p "$out"
    [ -f "$out/DONE" ] && exit 0
    if [ -f "$out/fuzz.db" ]; then
      # An interrupted shard (an evicted pod, a retried job): finish its run.
      "$gbcheck_bin" fuzz --out "$out" --resume --jobs "${GBCHECK_FUZZ_JOBS:-$(nproc)}"
    else
      if [ -n "$history" ] && [ -f "$history" ]; then cp "$history" "$out/fuzz.db"; fi
      seed=${GBCHECK_FUZZ_SEED:-$(( $(date -u +%s) / 86400 * 1000000000 ))}
      "$gbcheck_bin" fuzz --out "$out" --time "$duration" --shard "$index/$count" --seed "$seed" \
        --backends "${GBCHECK_FUZZ_BACKENDS:-gbc,nnc}" --jobs "${GBCHECK_FUZZ_JOBS:-$(nproc)}"
    fi
    touch "$out/DONE"
    ;;
  merge)
    [ $# -ge 2 ] || usage
    out_root=$2 junit=${3:-$2/junit.xml}
    build_gbcheck
    shopt -s nullglob
    if [ -n "${GBCHECK_FUZZ_WAIT_SHARDS:-}" ]; then
      until done=("$out_root"/shard-*/DONE); [ ${#done[@]} -ge "$GBCHECK_FUZZ_WAIT_SHARDS" ]; do sleep 60; done
    fi
    shards=("$out_root"/shard-*/fuzz.db)
    [ ${#shards[@]} -gt 0 ] || { echo "fuzz_nightly: no shard stores under $out_root" >&2; exit 2; }
    mkdir -p "$out_root/merged"
    "$gbcheck_bin" db merge "$out_root/merged/fuzz.db" "${shards[@]}"
    exec "$gbcheck_bin" db report "$out_root/merged" --junit "$junit"
    ;;
  *) usage ;;
esac
