#!/bin/bash
# Two real vLLM servers side by side on ONE GPU (`specadvisor sweep --parallel 2`), then the same arms
# alone (serial): do the parallel figures agree with the serial ones?
#
# Arms: baseline and ngram N=4 on SmolLM2, 64 HumanEval prompts, 128 tokens, concurrency 8, T=0;
# each server gets --gpu-memory-utilization 0.3 (two fit on one GPU), --max-model-len 2048,
# --max-num-seqs 32. The parallel sweep runs both arms in wave 1 and re-measures them together in
# the confirmation wave; the serial sweep runs baseline, ngram N=4, then the baseline bracket.
# About 6-8 minutes on an H200 with vLLM 0.26 (five server launches of ~55 s, the measurements).
#
# Usage: bash benchmarks/gpu_side_by_side.sh MODEL_DIR [OUT_DIR]
#   ENGINE   command that starts vLLM (default "vllm serve"; e.g. "python3 -m vllm.entrypoints.openai.api_server")
#   SPECADVISOR  how to run specadvisor (default "python3 -m specadvisor")
# vLLM 0.26 without flashinfer needs VLLM_USE_FLASHINFER_SAMPLER=0 (set here unless already set).
set -u
MODEL=${1:?usage: gpu_side_by_side.sh MODEL_DIR [OUT_DIR]}
OUT_DIR=${2:-${OUT:-.}}
ENGINE=${ENGINE:-vllm serve}
SA=${SPECADVISOR:-python3 -m specadvisor}
export VLLM_USE_FLASHINFER_SAMPLER=${VLLM_USE_FLASHINFER_SAMPLER:-0}
mkdir -p "$OUT_DIR"
COMMON=(sweep --model "$MODEL" --engine-cmd "$ENGINE" --method ngram --n 4
  --spec-extra '{"prompt_lookup_min":2,"prompt_lookup_max":4}' --prompts humaneval --num-prompts 64
  --output-len 128 --concurrency 8 --temperature 0
  --server-arg=--max-model-len=2048 --server-arg=--gpu-memory-utilization=0.3 --server-arg=--max-num-seqs=32 --json)

nvidia-smi --query-gpu=index,name,memory.used,memory.total,clocks.sm,temperature.gpu --format=csv 2>/dev/null | tee "$OUT_DIR/gpu_before.csv"
t0=$SECONDS
$SA "${COMMON[@]}" --parallel 2 --name side-by-side > "$OUT_DIR/parallel.json" 2> "$OUT_DIR/parallel.stderr"
echo "parallel sweep rc=$? in $((SECONDS - t0)) s"
t1=$SECONDS
$SA "${COMMON[@]}" --parallel 1 --name alone > "$OUT_DIR/serial.json" 2> "$OUT_DIR/serial.stderr"
echo "serial sweep rc=$? in $((SECONDS - t1)) s"
tail -n 3 "$OUT_DIR/parallel.stderr" "$OUT_DIR/serial.stderr"

python3 - "$OUT_DIR/parallel.json" "$OUT_DIR/serial.json" <<'EOF'
import json, sys
par, ser = (json.load(open(p)) for p in sys.argv[1:3])
print(f"\n{'arm':<12} {'side by side: runs (placement, wave)':<46} {'alone: runs':<22} {'mean side/alone':>15}")
for a in par["arms"]:
    b = next(x for x in ser["arms"] if x["arm_id"] == a["arm_id"])
    pr = [r for r in a.get("runs", []) if r.get("output_throughput")]
    sr = [r for r in b.get("runs", []) if r.get("output_throughput")]
    ptxt = ", ".join(f"{r['output_throughput']:.0f} ({r['placement'] or 'host'}, w{r['wave']})" for r in pr)
    stxt = ", ".join(f"{r['output_throughput']:.0f}" for r in sr)
    pm = sum(r["output_throughput"] for r in pr) / len(pr) if pr else float("nan")
    sm = sum(r["output_throughput"] for r in sr) / len(sr) if sr else float("nan")
    print(f"{a['arm_id']:<12} {ptxt:<46} {stxt:<22} {pm / sm:>14.2f}x")
def ratio(d):
    arms = {a["arm_id"]: a for a in d["arms"]}
    spec, base = arms.get("ngram-n4", {}), arms.get("baseline", {})
    return (spec.get("output_throughput") or float("nan")) / (base.get("output_throughput") or float("nan"))
for name, d in (("side by side", par), ("alone", ser)):
    rec, drift = d["recommendation"] or {}, d.get("drift") or {}
    verdict = rec.get("arm_id") or ("withheld" if rec.get("withheld") else "do not speculate")
    print(f"{name}: answer {verdict}; ngram N=4 / baseline {ratio(d):.3f}; baseline drift {drift.get('change', float('nan')) * 100:+.1f}%; launches {d['launches_used']}")
print(f"speedup ratio side by side vs alone: {ratio(par) / ratio(ser):.3f} (1.000 = the parallel comparison agrees with the serial one)")
print("side-by-side servers share the GPU's compute: each arm's absolute tok/s is expected to drop;")
print("what must agree is the ranking and the speedup ratio of arms measured in the same wave.")
EOF
