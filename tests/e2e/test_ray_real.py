"""`sweep --ray` on a real local Ray cluster (started here with `ray start --head`, two CPU slots,
stopped at the end whatever happens) running the real CPU vLLM: baseline and ngram N=2 measured at
the same time, each server and its load generator inside a Ray actor, each bound to its own core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.xdist_group("ray"), pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ray_cluster():
    from ray_local import local_cluster

    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with local_cluster(2, env) as (address, cluster_env):  # `ray start --head --num-cpus=2`, stopped by its own pids
        yield address, cluster_env


def test_two_arms_at_once_on_a_local_ray_cluster(cpu_engine, ray_cluster, tmp_path):
    address, env = ray_cluster
    db = tmp_path / "ray.db"
    cmd = [
        sys.executable,
        "-m",
        "specadvisor.cli.main",
        "--db",
        str(db),
        "sweep",
        "--cpu",
        "--ray",
        address,
        "--method",
        "ngram",
        "--n",
        "2",
        "--num-prompts",
        "4",
        "--output-len",
        "16",
        "--warmup",
        "1",
        "--no-bracket",
        "--json",
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1100, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout)
    arms = {a["arm_id"]: a for a in data["arms"]}
    assert set(arms) == {"baseline", "ngram-n2"}
    for arm_id, arm in arms.items():
        assert arm["status"] == "ok", (arm_id, arm.get("error"))
        assert arm["completed"] == 4 and arm["output_throughput"] > 0
        assert arm["startup_cold_s"] and arm["runs"][0]["startup_cache"] == "cold"
    assert arms["ngram-n2"]["mean_acceptance_length"] >= 1.0  # /metrics read beside the server
    # both arms ran in one wave, side by side, each on its own core of the node
    assert [r["wave"] for a in arms.values() for r in a["runs"]] == [1, 1]
    placements = [arms[a]["runs"][0]["placement"] for a in ("baseline", "ngram-n2")]
    cores = sorted(p.rsplit("cores ", 1)[-1] for p in placements)
    assert all("cores " in p for p in placements) and cores == ["0", "1"], placements
    assert not [line for line in _logs() if "runs at nice" in line]  # servers run at normal priority, not Ray's nice 15
    assert data["launches_used"] == 2 and data["recommendation"] is not None
    # the events reached the store through the driver: the session is finished and complete
    from specadvisor.store import Store

    with Store.open(db) as store:
        session = store.get_session(data["session_id"])
    assert session.status == "finished" and {r.arm_id for r in session.results} == {"baseline", "ngram-n2"}


def _logs() -> list[str]:
    from specadvisor.settings import paths

    return [line for f in paths().logs.rglob("*.log") for line in f.read_text().splitlines()]
