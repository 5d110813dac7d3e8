#!/bin/bash
# Rerun the Tarnwick guard lab with any openbook command and compare with main's run (/tmp/guard/main.txt).
# Usage: bash /tmp/guard/rerun.sh CMD...      e.g.  bash /tmp/guard/rerun.sh openbook   |   bash /tmp/guard/rerun.sh /tmp/ob-x
# LAB (default /work/wt-guard/benchmarks/guard/tarnwick_ferries) and MAIN (default /tmp/guard/main.txt) may be overridden.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 CMD... (an openbook command, e.g. openbook or /tmp/ob-x)" >&2; exit 2; }
LAB=${LAB:-$(cd "$(dirname "$0")/.." && pwd)}
MAIN=${MAIN:-/tmp/guard/main.txt}
WANT=4f4baf274efa9069b2e7d3714aa45ab549f83381f5eb8e66755163ff97910709
GOT=$(sha256sum "$LAB/questions.jsonl" | cut -d' ' -f1)
if [ "$GOT" != "$WANT" ]; then echo "questions.jsonl sha256 $GOT != frozen $WANT: the guard was changed, stop" >&2; exit 3; fi
echo "questions sha256 ok ($WANT)"
RUN=$(mktemp -d /tmp/guard/run-XXXXXX)       # fresh store and cwd (eval writes eval-results/ to the cwd)
cd "$RUN"
nice -n 5 "$@" eval answers --questions "$LAB/questions.jsonl" --docs "$LAB/docs" --store "$RUN/store" > "$RUN/new.txt" 2> "$RUN/new.err" \
  || { echo "eval failed (rc $?), see $RUN/new.err" >&2; tail -5 "$RUN/new.err" >&2; exit 1; }
python3 - "$MAIN" "$RUN/new.txt" <<'PY'
import re, sys
def parse(path):
    text = open(path, encoding="utf-8").read().splitlines()
    rows, summary, traps, part = {}, {}, {}, None
    for line in text:
        m = re.match(r"^(g\d\d)\s+(\S+)\s+(answer|refuse)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m:
            rows[m.group(1)] = m.group(4, 5, 6, 7)   # refused, ok, must, cite
            continue
        if line.strip().startswith("trap ") and "refusal" in line:
            part = "traps"; continue
        s = line.strip()
        if part == "traps" and s:
            f = s.split(); traps[f[0]] = " ".join(f[1:])
        elif re.match(r"^(refusal accuracy|must_contain rate|citation validity|context recall|access leaks|probe hits)", s):
            k, v = re.match(r"^(.*?)\s{2,}(\S+)$", s).groups(); summary[k] = v
    return rows, summary, traps
a_rows, a_sum, a_tr = parse(sys.argv[1]); b_rows, b_sum, b_tr = parse(sys.argv[2])
print(f"\n{'summary':<20} {'main':>8} {'new':>8}")
for k in a_sum: print(f"{k:<20} {a_sum[k]:>8} {b_sum.get(k, '?'):>8}")
print(f"\n{'trap':<13} {'main: n refusal must cite recall leaks':<40} | new")
for t in sorted(set(a_tr) | set(b_tr)): print(f"{t:<13} {a_tr.get(t, '-'):<40} | {b_tr.get(t, '-')}")
changed = [q for q in sorted(set(a_rows) | set(b_rows)) if a_rows.get(q) != b_rows.get(q)]
print(f"\nquestions whose outcome (refused/ok/must/cite) changed: {len(changed)}: {' '.join(changed) or '-'}")
print("(ids only; do not open the questions: the lab is a guard)")
PY
echo "full output: $RUN/new.txt"
