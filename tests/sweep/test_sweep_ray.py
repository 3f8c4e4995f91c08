"""--ray: the one-line errors without a cluster, and a real local Ray cluster (ray.init) with the
stand-in vLLM at the process boundary: an actor that dies (as when its node is lost) costs its arm,
never the session."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from specadvisor.domain import ArmStatus, SweepSettings
from specadvisor.errors import InputError
from specadvisor.sweep.plan import plan_from_methods

FAKE_VLLM = Path(__file__).resolve().parents[1] / "engine" / "fake_vllm.py"


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch):
    from specadvisor.sweep import ray_cluster

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings())
    with pytest.raises(InputError) as caught:
        ray_cluster.ray_runner(None, "auto", plan.session, {})
    assert caught.value.one_line() == "--ray needs Ray, which is not installed (pip install 'specadvisor[ray]')"
    assert caught.value.exit_code == 2


def test_ray_with_endpoint_is_refused(monkeypatch):
    from specadvisor.sweep import ray_cluster

    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(endpoint="http://127.0.0.1:8000"))
    with pytest.raises(InputError, match="--ray and --endpoint"):
        ray_cluster.ray_runner(None, "auto", plan.session, {})


def test_cli_names_the_extra_when_ray_is_missing(tmp_path):
    import subprocess

    code = (
        "import sys; sys.modules['ray'] = None; from specadvisor.cli.main import main; "
        f"sys.exit(main(['--db', {str(tmp_path / 'x.db')!r}, 'sweep', '--model', 'org/m', '--method', 'ngram', '--n', '2', '--ray']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == "specadvisor: error: --ray needs Ray, which is not installed (pip install 'specadvisor[ray]')"


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one local Ray cluster at a time (with tests/e2e/test_ray_real.py)
@pytest.mark.timeout(300)
def test_a_lost_actor_costs_its_arm_not_the_session(tmp_path):
    import json
    import subprocess

    from ray_local import local_cluster
    from specadvisor.store import Store

    root = str(Path(__file__).resolve().parents[2])
    db = tmp_path / "ray.db"
    with local_cluster(2, {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}) as (address, env):
        driver = Path(__file__).with_name("ray_lost_actor_driver.py")
        env = {**env, "HF_HUB_OFFLINE": "1"}  # "fake-model" is no Hub id: the nodes must not try to fetch it
        out = subprocess.run([sys.executable, str(driver), address, str(db)], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["slots"] == ["ray 1", "ray 2"]  # two CPU slots: two arms at once
    assert data["kinds"][-1] == "sweep_finished"
    with Store.open(db) as store:
        session = store.get_session(data["session_id"])
    assert session.status == "finished"
    lost = session.result_for("ngram-n2")
    assert lost.status == ArmStatus.failed and "Ray actor running this arm was lost" in lost.error
    base = session.result_for("baseline")
    assert base is not None and "lost" not in (base.error or "")  # the other arm ran to its own end
    assert base.runs[0].placement.startswith(os.uname().nodename) and "cores" in base.runs[0].placement
    assert data["baseline_command"][:2] == [sys.executable, str(FAKE_VLLM)]
    from specadvisor.settings import paths

    logs = [line for f in (paths().logs / data["session_id"]).glob("*.log") for line in f.read_text().splitlines()]
    assert any(line.startswith("$ ") and "[on " in line for line in logs)  # the driver keeps a copy of each node's server log
    assert not [line for line in logs if "runs at nice" in line]  # Ray's worker niceness is not inherited
    assert _fake_servers_left() == []  # the lost actor's server died with it (parent-death signal)


def _fake_servers_left(wait_s: float = 10.0) -> list[int]:
    import time

    import psutil

    deadline = time.monotonic() + wait_s
    while True:
        left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(FAKE_VLLM) in " ".join(p.info["cmdline"] or [])]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


class _FakeRay:
    """Ray at the process boundary for the GPU arithmetic (no GPU here): nodes, placement groups."""

    def __init__(self, nodes):
        import types

        self._nodes = nodes
        self.groups: list[tuple[list[dict], str]] = []
        self.actor_options: list[dict] = []
        fake = self

        def placement_group(bundles, strategy):
            fake.groups.append((bundles, strategy))
            raise RuntimeError("placement recorded")  # stop here: the rest needs a cluster

        self.modules = {
            "ray": self,
            "ray.util": types.SimpleNamespace(),
            "ray.util.placement_group": types.SimpleNamespace(placement_group=placement_group),
            "ray.util.scheduling_strategies": types.SimpleNamespace(PlacementGroupSchedulingStrategy=object),
        }

    def is_initialized(self):
        return True

    def nodes(self):
        return [{"Alive": True, "Resources": r} for r in self._nodes] + [{"Alive": False, "Resources": {"GPU": 8.0}}]


def _install(monkeypatch, fake):
    for name, module in fake.modules.items():
        monkeypatch.setitem(sys.modules, name, module)


def test_gpu_slots_are_whole_tp_groups_per_node_and_tp_over_1_is_strict_pack(monkeypatch):
    from specadvisor.sweep.ray_cluster import ray_runner

    fake = _FakeRay([{"GPU": 8.0, "CPU": 64.0}, {"GPU": 3.0, "CPU": 16.0}])  # 4 + 1 groups of 2; a lost node counts for nothing
    _install(monkeypatch, fake)
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(server_args=["--tensor-parallel-size", "2"]))
    kwargs = ray_runner("ray-head.invalid:6379", "auto", plan.session, {})
    assert len(kwargs["slots"]) == 5
    assert kwargs["server_factory"].resources == {"num_gpus": 2, "num_cpus": 1}
    assert len(ray_runner("ray-head.invalid:6379", "3", plan.session, {})["slots"]) == 3  # --parallel K caps it
    server = kwargs["server_factory"](plan.session.arms[0], plan.session)
    import asyncio

    with pytest.raises(RuntimeError, match="placement recorded"):
        asyncio.run(server.start())
    assert fake.groups == [([{"CPU": 1, "GPU": 2}], "STRICT_PACK")]


def test_cpu_only_cluster_gives_one_slot_per_cpu_and_no_gpus(monkeypatch):
    from specadvisor.sweep.ray_cluster import ray_runner

    fake = _FakeRay([{"CPU": 2.0}, {"CPU": 4.0}])
    _install(monkeypatch, fake)
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings())
    kwargs = ray_runner(None, "auto", plan.session, {})
    assert [s.label for s in kwargs["slots"]] == [f"ray {i}" for i in range(1, 7)]
    assert kwargs["server_factory"].resources == {"num_gpus": 0, "num_cpus": 1}
    import asyncio

    with pytest.raises(RuntimeError):
        asyncio.run(kwargs["server_factory"](plan.session.arms[0], plan.session).start())
    assert fake.groups == [([{"CPU": 1}], "PACK")]


def test_a_cluster_with_no_room_is_an_engine_error(monkeypatch):
    from specadvisor.errors import EngineError
    from specadvisor.sweep.ray_cluster import ray_runner

    _install(monkeypatch, _FakeRay([{"GPU": 1.0, "CPU": 8.0}]))
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(server_args=["--tensor-parallel-size=2"]))
    with pytest.raises(EngineError, match=r"no room for one arm .*2 GPUs on one node"):
        ray_runner(None, "auto", plan.session, {})
