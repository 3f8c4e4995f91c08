"""One line per method from the lanes of benchmarks/gpu/methods_h200.sh: started or not, the acceptance
read (AL, per-position rates, drafts counted) or vLLM's own first error, and a JSON record of each.

    python3 benchmarks/gpu/methods_summary.py LANE_DIR... [--json OUT.json]

A lane folder holds `expect` (one `method|N|label` per planned arm), the sweep's `sweep.json` and
stderr, `show.json` (`sessions show --json` of its session) and `home/` (its SPECADVISOR_HOME, with
the server logs). Every expected arm gets a line, also one the lane never reached or whose sweep
died: what is missing is said, never filled in. The figures are the store's (`sessions show`), the
error is vLLM's exception as the server log has it (`engine.diagnose.first_exception`) beside
specadvisor's diagnosis.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _log_lines(lane: Path, session_id: str, arm_id: str, stored: str | None) -> list[str]:
    candidates = [Path(stored)] if stored else []
    candidates += sorted((lane / "home" / "data" / "logs" / session_id).glob(f"{arm_id}*.log"))
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace").splitlines()
    return []


def _first_exception(lines: list[str]) -> str | None:
    try:
        from specadvisor.engine.diagnose import first_exception
    except ImportError:  # run without the project on the path: the stored diagnosis still says it
        return None
    return first_exception(lines)


def lane_records(lane: Path) -> list[dict[str, Any]]:
    """A record per expected arm of one lane (method, N, label from `expect`)."""
    expected = [line.split("|", 2) for line in (lane / "expect").read_text(encoding="utf-8").splitlines() if line.strip()]
    show = _load(lane / "show.json") or {}
    session_id = str(show.get("id") or "")
    arms = {(a.get("method"), a.get("n")): a for a in show.get("arms") or []}
    results = {r.get("arm_id"): r for r in show.get("results") or []}
    records = []
    for method, n_text, label in expected:
        n = int(n_text)
        record: dict[str, Any] = {"lane": lane.name, "method": method, "n": n, "label": label, "session": session_id[:8]}
        arm = arms.get((method, n))
        result = results.get(arm.get("id")) if arm else None
        if result is None:
            why = "the sweep did not plan it" if show and not arm else "no result stored"
            record.update(status="not reached", started=None, why=why if show else "the lane's sweep left no session (see its sweep.stderr)")
            records.append(record)
            continue
        runs = result.get("runs") or []
        startup = next((r.get("startup_s") for r in runs if r.get("startup_s") is not None), None)
        drafts = result.get("num_drafts") or 0
        record.update(
            status=result.get("status"),
            started=startup is not None or result.get("status") == "ok",
            ready_s=round(startup, 1) if startup is not None else None,
            startup_cache=next((r.get("startup_cache") for r in runs if r.get("startup_cache")), None),
            completed=result.get("completed"),
            acceptance_read=bool(drafts),
            drafts=drafts,
            accepted_tokens=result.get("num_accepted_tokens"),
            mean_acceptance_length=result.get("mean_acceptance_length"),
            per_position=[p.get("rate") for p in result.get("per_position") or []],
            error=(result.get("error") or "").strip() or None,
        )
        if result.get("status") != "ok" or not drafts:
            lines = _log_lines(lane, session_id, str(result.get("arm_id")), result.get("log_path"))
            record["vllm_error"] = _first_exception(lines)
        records.append(record)
    return records


def line(r: dict[str, Any]) -> str:
    head = f"{r['label']} N={r['n']}:"
    if r["started"] is None:
        return f"{head} not reached ({r['why']})"
    if r["status"] == "skipped":
        return f"{head} not reached (skipped: the lane's time limit came first)"
    if not r["started"] and "time limit" in (r.get("error") or ""):
        return f"{head} not finished: stopped at the lane's time limit before its server was ready"
    parts = []
    if r["started"]:
        ready = f", ready in {r['ready_s']:.0f} s ({r['startup_cache'] or 'cache ?'})" if r.get("ready_s") is not None else ""
        parts.append(f"started yes{ready}")
    else:
        parts.append("started no")
    if r["acceptance_read"] and r["mean_acceptance_length"] is not None:
        rates = " ".join(f"{x:.2f}" for x in r["per_position"])
        parts.append(f"acceptance read: AL {r['mean_acceptance_length']:.2f}, per-position {rates} ({r['drafts']} drafts)")
    elif r["status"] == "ok":
        parts.append("acceptance NOT read (no drafts counted)")
    if r["status"] != "ok":
        parts.append(f"status {r['status']}")
    if r.get("vllm_error"):
        parts.append(f"vLLM: {r['vllm_error'][:400]}")
    if r.get("error") and (not r.get("vllm_error") or r["error"] not in r["vllm_error"]):
        parts.append(f"specadvisor: {r['error'].splitlines()[0][:300]}")
    return f"{head} " + "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lanes", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="write the records here")
    args = parser.parse_args()
    records = [r for lane in args.lanes for r in lane_records(lane)]
    for r in records:
        print(line(r))
    if args.json:
        args.json.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    return 0 if records else 1


if __name__ == "__main__":
    sys.exit(main())
