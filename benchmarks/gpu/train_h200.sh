#!/usr/bin/env bash
# The train-serve-sweep proof on one GPU: `specadvisor train` trains an EAGLE-3 drafter for a target
# with Speculators (online, against a vllm serve it launches), measures it with vLLM on held-out
# prompts, then `specadvisor drafters judge` sweeps it against no speculation, n-gram and ngram_gpu.
#
# Run from the project root on a GPU machine whose `python3` imports vLLM (>= 0.17) and speculators
# 0.9, with the target in MODEL (a local folder). What the README's H200 rows come from:
#   MODEL=/path/to/SmolLM2-135M-Instruct TRAIN_PROMPTS=train.jsonl SWEEP_PROMPTS=judge.jsonl RESULTS=/tmp/out bash benchmarks/gpu/train_h200.sh
# PHASE=train stops after the held-out check, PHASE=judge judges the newest trained drafter (so
# other GPU work can share the machine while training, never while judging). Results in RESULTS:
# train.json (the drafter's record), train.err and judge.err (the runs' lines), judge.json (the
# sweep's summary), the sessions as bundles (heldout.bundle.json, judge.bundle.json), drafter/.
set -u
MODEL=${MODEL:?the target model folder}
R=${RESULTS:-/tmp/out}
PHASE=${PHASE:-all}
ENGINE=${ENGINE:-python3 -m vllm.entrypoints.openai.api_server}
SERVE=(--server-arg=--max-model-len=2048 --server-arg=--max-num-seqs=64)
mkdir -p "$R"
t0=$SECONDS
if [ "$PHASE" != judge ]; then
  python3 -m specadvisor train --model "$MODEL" --engine-cmd "$ENGINE" "${SERVE[@]}" --no-sweep \
    --prompts "${TRAIN_PROMPTS:-sharegpt}" --num-prompts "${TRAIN_NUM:-1000}" --output-len "${TRAIN_LEN:-192}" \
    --minutes "${TRAIN_MINUTES:-3}" --draft-vocab-size "${DRAFT_VOCAB:-4096}" --total-seq-len 4096 \
    --json > "$R/train.json" 2> "$R/train.err"
  echo "train rc=$? in $((SECONDS - t0)) s" | tee -a "$R/status.txt"
fi
if [ "$PHASE" != train ]; then
  id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$R/train.json")
  t1=$SECONDS
  python3 -m specadvisor drafters judge "$id" --engine-cmd "$ENGINE" "${SERVE[@]}" \
    --sweep-prompts "${SWEEP_PROMPTS:-sharegpt}" --sweep-num-prompts "${SWEEP_NUM:-32}" --sweep-output-len "${SWEEP_LEN:-256}" \
    --concurrency "${CONCURRENCY:-1}" --json > "$R/judge.json" 2> "$R/judge.err"
  echo "judge rc=$? in $((SECONDS - t1)) s" | tee -a "$R/status.txt"
fi
python3 - "$R" <<'PY'
import json, subprocess, sys
from pathlib import Path
out = Path(sys.argv[1])
record = json.loads(subprocess.run(["python3", "-m", "specadvisor", "drafters", "show", json.loads((out / "train.json").read_text())["id"], "--json"],
                                   capture_output=True, text=True).stdout or "{}")
sessions = {"heldout": record.get("heldout_session_id"), "judge": (record.get("judge_session_ids") or [None])[-1]}
for name, sid in sessions.items():
    if sid:
        subprocess.run(["python3", "-m", "specadvisor", "sessions", "export", sid, "--output", str(out / f"{name}.bundle.json"), "--force"], check=False)
if record.get("folder") and not (out / "drafter").exists():
    subprocess.run(["cp", "-r", record["folder"], str(out / "drafter")], check=False)
(out / "drafter.json").write_text(json.dumps(record, indent=1, default=str))
print(f"drafter {record.get('id', '?')[:8]}: {record.get('status')}, {record.get('steps')} steps, {record.get('train_seconds', 0):.0f} s training")
PY
