#!/usr/bin/env bash
# The train-serve-sweep proof on one GPU: `specadvisor train` trains an EAGLE-3 drafter for a target
# with Speculators (online, against a vllm serve it launches), measures it with vLLM on held-out
# prompts, then judges it against no speculation, n-gram and ngram_gpu at concurrency 1.
#
# Run from the project root on a GPU machine that has vLLM (>= 0.17) and speculators 0.9 importable by
# `python3`, with the target in MODEL (a local folder). What the README's H200 rows come from:
#   MODEL=/path/to/SmolLM2-135M-Instruct RESULTS=/tmp/out bash benchmarks/gpu/train_h200.sh
# Results in RESULTS: train.json (the drafter's record), train.err (the run's lines), the sessions
# as bundles (heldout.bundle.json, judge.bundle.json) and the drafter folder (drafter/).
set -u
MODEL=${MODEL:?the target model folder}
R=${RESULTS:-/tmp/out}
ENGINE=${ENGINE:-python3 -m vllm.entrypoints.openai.api_server}
mkdir -p "$R"
t0=$SECONDS
python3 -m specadvisor train --model "$MODEL" --engine-cmd "$ENGINE" \
  --prompts "${TRAIN_PROMPTS:-sharegpt}" --num-prompts "${TRAIN_NUM:-1000}" --output-len "${TRAIN_LEN:-192}" \
  --minutes "${TRAIN_MINUTES:-3}" --draft-vocab-size "${DRAFT_VOCAB:-4096}" --total-seq-len 4096 \
  --server-arg=--max-model-len=2048 --server-arg=--max-num-seqs=64 \
  --sweep-prompts "${SWEEP_PROMPTS:-sharegpt}" --sweep-num-prompts "${SWEEP_NUM:-32}" --sweep-output-len "${SWEEP_LEN:-256}" \
  --concurrency "${CONCURRENCY:-1}" --json > "$R/train.json" 2> "$R/train.err"
rc=$?
echo "train rc=$rc in $((SECONDS - t0)) s" | tee -a "$R/status.txt"
python3 - "$R" <<'PY'
import json, subprocess, sys
from pathlib import Path
out = Path(sys.argv[1])
try:
    record = json.loads((out / "train.json").read_text())
except (OSError, ValueError):
    sys.exit("no drafter record: see train.err")
sessions = {"heldout": record.get("heldout_session_id"), "judge": (record.get("judge_session_ids") or [None])[-1]}
for name, sid in sessions.items():
    if sid:
        subprocess.run(["python3", "-m", "specadvisor", "sessions", "export", sid, "--output", str(out / f"{name}.bundle.json"), "--force"], check=False)
if record.get("folder"):
    subprocess.run(["cp", "-r", record["folder"], str(out / "drafter")], check=False)
print(f"drafter {record['id'][:8]}: {record['status']}, {record['steps']} steps, {record['train_seconds']:.0f} s training, {record['wall_seconds']:.0f} s in all")
PY
exit $rc
