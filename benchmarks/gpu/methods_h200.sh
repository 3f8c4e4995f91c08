#!/usr/bin/env bash
# The GPU rows of the README's "Methods launched for real" table in one go (issue 36, item 4): DFlash
# and P-EAGLE (tiny random heads; P-EAGLE's carries its parallel-drafting token), the draft model
# (SmolLM2 drafting for itself), ngram, ngram_gpu and suffix (arctic-inference's suffix decoding, built
# here) at N=3, and MTP on a tiny random MiMo target at its own N (1, its layer count, then 3). Each is
# one arm of specadvisor's own sweep (--no-baseline; 8 `edit` prompts x 32 tokens, T=0); the end prints
# one line per method: started or not, the acceptance read (AL, per position) or vLLM's first error.
#
# Made for the lent H200 once its kit has staged (vLLM 0.26.0 for python3 under /tmp/site, SmolLM2
# bf16 in /tmp/smollm2, the environment in /tmp/kit/env.sh), from the project's root; 6-7 minutes:
#   bash .gpu/s/stage.sh LAST && bash .gpu/s/ready.sh && bash benchmarks/gpu/methods_h200.sh
# with the picked arctic-inference sources carried (see build_suffix.sh's header: --pick them into
# .gpu/arctic-inference, which .gpu/ keeps out of git). Nothing here needs the network.
#
# Environment (defaults as staged):
#   TARGET=/tmp/smollm2   the Llama target of the SmolLM2 arms; the tiny heads and the tiny MiMo are
#                         built from its config and tokenizer (tests/e2e/tiny_drafters.py)
#   KIT_ENV=/tmp/kit/env.sh  sourced when present    ENGINE="python3 -m vllm.entrypoints.openai.api_server"
#   ARCTIC_SRC=.gpu/arctic-inference   absent: the suffix arm still runs and records vLLM's error
#   WORK=/tmp/methods     tiny models, the built arctic_inference, one folder per lane
#   OUT (the device's)    <= 8 files: methods.txt, methods.json, results.tar.gz (sweep and sessions
#                         JSON, server and build logs, the lanes' stores), run.log
#   LIMIT_MIN=6.5  each lane's --time-limit (the arm in flight is stopped, the rest not started)
#   N=3  MTP_N=1,3 (empty: no MTP lane)  PROMPTS=edit  NUM_PROMPTS=8  OUTPUT_LEN=32  KV_BYTES=4294967296
#   LANE_A="dflash peagle ngram_gpu"  LANE_B="draft_model suffix ngram"  (method ids on TARGET; MTP is lane C)
#   CONCURRENT=1   0 runs the lanes one after another (~10-12 min: start it detached)
#   ENGINE_PYTHON=python3   the Python that runs vLLM (torch): builds the tiny models and arctic_inference
#   SA_PY=python3           the Python that runs specadvisor (the project on its path)
#   ENGINE_ARGS    replaces --engine-cmd "$ENGINE" (e.g. "--cpu" to try this script on the CPU engine)
#   SERVER_ARGS    replaces the vLLM flags below (the CPU engine brings its own)
#
# Why three lanes and not `--parallel 2`: specadvisor starts servers that share a GPU one after another
# (sweep/wave_sync.py: two vLLM 0.26 start-ups profiling one GPU together left one with a negative KV
# cache), so on one GPU `--parallel 2` overlaps only the measurements (seconds here), and seven
# start-ups of 55-100 s each do not fit 8 minutes. So three sweeps run at once, each one server at a
# time, each server with --kv-cache-memory-bytes: with it vLLM skips that profiling
# (v1/worker/gpu_worker.py determine_available_memory, 0.26.0 line 462) and start-ups can overlap;
# --gpu-memory-utilization 0.3 stays for vLLM's start-up check that 30% of the GPU is free. Each lane
# has its own SPECADVISOR_HOME (store, logs, compile caches): no two processes write one cache.
# One method failing never stops the others: each arm is its own server, each lane its own sweep.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
KIT_ENV=${KIT_ENV:-/tmp/kit/env.sh}
# shellcheck disable=SC1090
[ -f "$KIT_ENV" ] && . "$KIT_ENV"
ENGINE=${ENGINE:-python3 -m vllm.entrypoints.openai.api_server}
TARGET=${TARGET:-/tmp/smollm2}; ARCTIC_SRC=${ARCTIC_SRC:-$root/.gpu/arctic-inference}; WORK=${WORK:-/tmp/methods}
OUT=${OUT:-$WORK/out}; LIMIT_MIN=${LIMIT_MIN:-6.5}; N=${N:-3}; MTP_N=${MTP_N-1,3}
PROMPTS=${PROMPTS:-edit}; NUM_PROMPTS=${NUM_PROMPTS:-8}; OUTPUT_LEN=${OUTPUT_LEN:-32}; KV_BYTES=${KV_BYTES:-4294967296}
LANE_A=${LANE_A-dflash peagle ngram_gpu}; LANE_B=${LANE_B-draft_model suffix ngram}; CONCURRENT=${CONCURRENT:-1}
read -r -a engine_args <<< "${ENGINE_ARGS:-}"; [ ${#engine_args[@]} = 0 ] && engine_args=(--engine-cmd "$ENGINE")
read -r -a server_args <<< "${SERVER_ARGS---server-arg=--max-model-len=2048 --server-arg=--gpu-memory-utilization=0.3 --server-arg=--max-num-seqs=32 --server-arg=--kv-cache-memory-bytes=$KV_BYTES}"
ENGINE_PYTHON=${ENGINE_PYTHON:-python3}; SA_PY=${SA_PY:-python3}; SA=("$SA_PY" -m specadvisor)
export VLLM_USE_FLASHINFER_SAMPLER=${VLLM_USE_FLASHINFER_SAMPLER:-0} PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$WORK"; rm -rf "$WORK/lanes" "$WORK/suffix.done"; mkdir -p "$WORK/lanes"
exec > >(tee "$OUT/run.log") 2>&1
t0=$SECONDS
say() { echo "[$(date +%T) +$((SECONDS - t0))s] $*"; }
[ -f "$TARGET/config.json" ] || { say "no target at $TARGET (staged? set TARGET)"; exit 2; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader

# 1. suffix decoding's arctic_inference, in the background (the suffix arm is second in its lane)
export PYTHONPATH="$WORK/arctic${PYTHONPATH:+:$PYTHONPATH}"
if [ -d "$ARCTIC_SRC" ]; then
  { PYTHON=$ENGINE_PYTHON bash "$here/build_suffix.sh" "$ARCTIC_SRC" "$WORK/arctic" > "$WORK/build_suffix.log" 2>&1
    say "suffix build rc=$?: $(tail -n 1 "$WORK/build_suffix.log")"; touch "$WORK/suffix.done"; } &
  suffix_pid=$!
else
  suffix_pid=; echo "no arctic-inference sources at $ARCTIC_SRC" > "$WORK/build_suffix.log"; say "suffix: no sources at $ARCTIC_SRC, not built"
  touch "$WORK/suffix.done"
fi

# 2. the tiny models, one Python (one torch import)
"$ENGINE_PYTHON" - "$root/tests/e2e" "$TARGET" "$WORK" <<'PY' || say "the tiny models did not build"
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import tiny_drafters
t = time.time()
for kind, name in (("dflash", "tiny-dflash"), ("peagle", "tiny-peagle"), ("mtp", "tiny-mimo")):
    tiny_drafters.build(kind, Path(sys.argv[2]), Path(sys.argv[3]) / name)
print(f"tiny models built in {time.time() - t:.1f} s: dflash and peagle heads for {sys.argv[2]}, a MiMo target with its tokenizer")
PY

# 3. the lanes: each a sweep of its own, one server at a time
common=(--no-baseline "${engine_args[@]}" "${server_args[@]}" --prompts "$PROMPTS" --num-prompts "$NUM_PROMPTS"
        --output-len "$OUTPUT_LEN" --temperature 0 --time-limit "$LIMIT_MIN" --parallel 1 --json)
label() {
  case $1 in
    dflash) echo "DFlash (tiny random head)" ;; peagle) echo "P-EAGLE (tiny random EAGLE-3 head with ptd_token_id)" ;;
    draft_model) echo "draft model (SmolLM2 for itself)" ;; ngram) echo "n-gram" ;; ngram_gpu) echo "ngram_gpu" ;;
    suffix) echo "suffix (arctic-inference 0.3.0, suffix decoding only)" ;; mtp) echo "MTP (tiny random MiMo target)" ;; *) echo "$1" ;;
  esac
}
extra() {
  case $1 in
    dflash) echo "dflash:{\"model\":\"$WORK/tiny-dflash\"}" ;; peagle) echo "peagle:{\"model\":\"$WORK/tiny-peagle\"}" ;;
    draft_model) echo "draft_model:{\"model\":\"$TARGET\"}" ;; ngram | ngram_gpu) echo "$1:{\"prompt_lookup_min\":2,\"prompt_lookup_max\":4}" ;;
  esac
}
lane() {  # lane NAME MODEL N_VALUES METHOD...
  local name=$1 model=$2 ns=$3; shift 3
  local dir=$WORK/lanes/$name; mkdir -p "$dir/home"
  local args=(sweep --model "$model" --method "$(IFS=,; echo "$*")" --n "$ns" --name "h200-methods-$name" "${common[@]}")
  for m in "$@"; do e=$(extra "$m"); [ -n "$e" ] && args+=(--spec-extra "$e"); for n in ${ns//,/ }; do echo "$m|$n|$(label "$m")" >> "$dir/expect"; done; done
  say "lane $name: $* at N=$ns on $model"
  if [ "$1" = suffix ]; then  # its server would look for arctic_inference at once: let the build end first
    for _ in $(seq 180); do [ -f "$WORK/suffix.done" ] && break; sleep 1; done
  fi
  local hard=$(awk "BEGIN {print int($LIMIT_MIN * 60 + 90)}")
  SPECADVISOR_HOME=$dir/home VLLM_CACHE_ROOT=$dir/home/cache/vllm/vllm-cache TORCHINDUCTOR_CACHE_DIR=$dir/home/cache/vllm/inductor \
    timeout -s INT -k 30 "$hard" "${SA[@]}" "${args[@]}" > "$dir/sweep.json" 2> "$dir/sweep.stderr"
  local rc=$?
  local sid; sid=$("$SA_PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['session_id'])" "$dir/sweep.json" 2>/dev/null) \
    || sid=$(SPECADVISOR_HOME=$dir/home "${SA[@]}" sessions list --json 2>/dev/null | "$SA_PY" -c "import json,sys; s=json.load(sys.stdin); print(s[0]['id'] if s else '')" 2>/dev/null)
  [ -n "$sid" ] && SPECADVISOR_HOME=$dir/home "${SA[@]}" sessions show "$sid" --json > "$dir/show.json" 2>> "$dir/sweep.stderr"
  say "lane $name: sweep rc=$rc, session ${sid:-none}"
}
monitor() {  # every minute: the newest server log of each lane, its last line
  while sleep 60; do
    for d in "$WORK"/lanes/*/; do f=$(ls -t "$d"home/data/logs/*/*.log 2>/dev/null | head -1)
      [ -n "$f" ] && say "$(basename "$d") $(basename "$f"): $(tail -n 1 "$f" | cut -c1-160)"; done
  done
}
monitor & mon=$!
pids=()
run() { if [ "$CONCURRENT" = 1 ]; then lane "$@" & pids+=($!); else lane "$@"; fi; }
# shellcheck disable=SC2086
[ -n "$LANE_A" ] && run a "$TARGET" "$N" $LANE_A
# shellcheck disable=SC2086
[ -n "$LANE_B" ] && run b "$TARGET" "$N" $LANE_B
[ -n "$MTP_N" ] && run c "$WORK/tiny-mimo" "$MTP_N" mtp
for p in "${pids[@]}"; do wait "$p"; done
kill "$mon" 2> /dev/null
[ -n "$suffix_pid" ] && wait "$suffix_pid"

# 4. results
say "results:"
"$SA_PY" "$here/methods_summary.py" "$WORK"/lanes/*/ --json "$OUT/methods.json" | tee "$OUT/methods.txt"
for f in "$WORK"/tiny-*/config.json; do cp "$f" "$WORK/lanes/$(basename "$(dirname "$f")").config.json" 2> /dev/null; done
cp "$WORK/build_suffix.log" "$WORK/lanes/" 2> /dev/null
tar -czf "$OUT/results.tar.gz" -C "$WORK" --exclude='home/cache' lanes 2> /dev/null
say "done; $OUT: $(ls "$OUT" | tr '\n' ' ')"
