#!/bin/bash
# T1 f32 to 0.3 % on 1 thread, interleaved round by round: the reference solver, optionally another
# checkout of Kibitz (BASE, e.g. main), and this checkout; each solve a process of its own
# (`deno task solve`'s command and V8 flags, start-up and writing both files included). Prints one
# line per round (wall s and CPU s user+sys of each) and the medians of the per-round ratios.
#
#   tasks/t1_race.sh REFSOLVE [ROUNDS=5] [BASE_DIR]
#   e.g. tasks/t1_race.sh ../shared/tools/refsolver/refsolve 8 /tmp/main-checkout
# Environment: T1_BITS=R/S (storage bits, default 32/32; the reference runs i16 unless 32/32),
# T1_THREADS (default 1, both solvers), T1_ITERATIONS (cap, default 1000).
set -euo pipefail
if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
REF=$(realpath "$1")
BITS=${T1_BITS:-32/32}
THREADS=${T1_THREADS:-1}
ITS=${T1_ITERATIONS:-1000}
PREC=$([[ "$BITS" == "32/32" ]] && echo f32 || echo i16)
ROUNDS=${2:-5}
BASE=${3:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
[[ -x "$REF" ]] || { echo "error: bad_args: $1 is not an executable reference solver" >&2; exit 1; }
[[ -z "$BASE" || -f "$BASE/tasks/solve.ts" ]] || {
  echo "error: bad_args: $BASE has no tasks/solve.ts" >&2
  exit 1
}
[[ -x /usr/bin/time ]] || { echo "error: missing_tool: /usr/bin/time is needed" >&2; exit 1; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
FLAGS=$(cd "$HERE" && deno eval 'import { SOLVE_V8_FLAGS } from "./src/poker/memory.ts"; console.log(SOLVE_V8_FLAGS)')
(cd "$HERE" && deno eval "import { T1_SPOT } from './src/poker/config.ts'; Deno.writeTextFileSync('$DIR/t1.toml', T1_SPOT + '\n[solver]\nthreads = $THREADS\nregret_bits = ${BITS%/*}\nstrategy_bits = ${BITS#*/}\nmax_iterations = $ITS\ntarget_exploitability_pct = 0.3\nbackend = \"cpu\"\n')")

# Runs a command, prints "wall cpu" in seconds.
timed() {
  /usr/bin/time -f "%e %U %S" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || {
    echo "error: solve_failed: $* failed: $(tail -3 "$DIR/err")" >&2
    exit 1
  }
  awk '{printf "%s %.2f", $1, $2 + $3}' "$DIR/time"
}
ours() { (cd "$1" && timed deno run -A "--v8-flags=$FLAGS" tasks/solve.ts "$DIR/t1.toml" --out "$DIR/out"); }

: >"$DIR/rows"
for r in $(seq 1 "$ROUNDS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  ref=$(RAYON_NUM_THREADS=$THREADS timed "$REF" T1 "$PREC" "$ITS" 0.3 10)
  base=$([[ -n "$BASE" ]] && ours "$BASE" || echo "- -")
  mine=$(ours "$HERE")
  echo "round $r load $load reference $ref base $base this $mine" | tee -a "$DIR/rows"
done
python3 - "$DIR/rows" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
col = lambda i: [None if r[i] == "-" else float(r[i]) for r in rows]
ref, base, mine = (col(5), col(6)), (col(8), col(9)), (col(11), col(12))
for k, name in ((0, "wall"), (1, "CPU")):
    ratio = lambda a, b: st.median(y / x for x, y in zip(a[k], b[k]))
    line = f"{name} medians s: reference {st.median(ref[k]):.2f}, this {st.median(mine[k]):.2f} " \
        f"(this / reference per round, median {ratio(ref, mine):.3f})"
    if base[k][0] is not None:
        line += f"; base {st.median(base[k]):.2f} (base / reference {ratio(ref, base):.3f}, " \
            f"this / base {ratio(base, mine):.3f})"
    print(line)
print("load averages:", " ".join(r[3] for r in rows))
PY
