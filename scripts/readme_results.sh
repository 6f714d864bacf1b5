#!/usr/bin/env bash
# usage: scripts/readme_results.sh CHECKOUT OUTDIR PORT
# The README's "Use the service" walkthrough run against the code of CHECKOUT (a checkout or `git worktree` of any
# commit, put first on PYTHONPATH; the Python of $PYTHON, default python3, supplies the dependencies): every result
# format of its job, with and without per-topic rows, and the offline CLI's JSON, written to OUTDIR. Run it for two
# commits and `cmp` the files to show a change kept the README's results byte for byte.
set -euo pipefail
CHECKOUT=$1; OUT=$2; PORT=$3
rm -rf "$OUT"; mkdir -p "$OUT/data" "$OUT/files"
export PYTHONPATH="$CHECKOUT" EVALSERVE_DATA_DIR="$OUT/data"
unset DATABASE_URL REDIS_URL
PY=${PYTHON:-python3}
cd "$OUT/files"
$PY -m evalserve.cli.main demo --files . > /dev/null
$PY -m evalserve.cli.main serve --port $PORT --concurrency 1 > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE; wait $SERVE 2>/dev/null || true' EXIT
URL=http://127.0.0.1:$PORT
for i in $(seq 1 120); do curl -sf $URL/health > /dev/null && break; sleep 1; done
TOKEN=$(cat "$OUT/data/admin-token")
json_id() { python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])'; }
COL=$(curl -s -H "Authorization: Bearer $TOKEN" -F name=web2012 -F qrels=@qrels.txt $URL/v1/collections | json_id)
JOB=$(curl -s -H "Authorization: Bearer $TOKEN" -F collection=$COL -F "measures=AP nDCG@10 alpha_nDCG@20" \
      -F run=@bm25.run -F run=@dense.run.gz $URL/v1/submissions | json_id)
until curl -s -H "Authorization: Bearer $TOKEN" $URL/v1/jobs/$JOB | grep -Eq '"state": ?"(succeeded|failed)"'; do sleep 0.5; done
for fmt in json tsv csv trec_eval html latex; do
  curl -s -H "Authorization: Bearer $TOKEN" "$URL/v1/jobs/$JOB/result?format=$fmt" > "$OUT/result.$fmt"
  curl -s -H "Authorization: Bearer $TOKEN" "$URL/v1/jobs/$JOB/result?format=$fmt&per_topic=true" > "$OUT/result.per_topic.$fmt"
done
$PY -m evalserve.cli.main evaluate --qrels qrels.txt --run bm25.run --run dense.run.gz -m AP nDCG@10 alpha_nDCG@20 > "$OUT/offline.json"
