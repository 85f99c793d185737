#!/usr/bin/env bash
# replay of many files on 1 and 2 threads, interleaved rounds (order rotated):
#   cargo build --release && cargo run --release --example gen_big_har -- /tmp/one.har 1
#   benches/replay_jobs.sh /tmp/one.har 200 5
# copies the capture N times into a directory and times `replay DIR --format jsonl -j1` and
# `-j2`, printing each round's seconds and the median ratio.
set -euo pipefail
src=${1:-/tmp/one.har}; n=${2:-200}; rounds=${3:-5}
exe="$(dirname "$0")/../target/release/mcp-verdict"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for i in $(seq -w 1 "$n"); do cp "$src" "$dir/c$i.har"; done
run() { local t0 t1; t0=$(date +%s.%N); "$exe" replay "$dir" --format jsonl -j "$1" > /dev/null || [ $? -eq 1 ]; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
ratios=()
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then a=$(run 1); b=$(run 2); else b=$(run 2); a=$(run 1); fi
  ratio=$(echo "scale=3; $a / $b" | bc)
  echo "round $r: -j1 ${a}s  -j2 ${b}s  speed-up ${ratio}x"
  ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print "median speed-up (-j1 time / -j2 time): " a[int((NR+1)/2)] "x"}'
