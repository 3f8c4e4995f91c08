"""Two real CPU vLLM servers side by side (`--parallel 2` on a CPU-only host: one core each through
VLLM_CPU_OMP_THREADS_BIND), each on its own port, log and process group, measured in one wave."""

from __future__ import annotations

import pytest

from specadvisor.domain import ArmStatus, SweepFinished, SweepSettings
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner, VllmServerFactory
from specadvisor.sweep.slots import cpu_slots

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.exclusive, pytest.mark.timeout(1200)]


async def test_two_real_servers_run_side_by_side_pinned_to_one_core_each(cpu_engine, tmp_path):
    settings = SweepSettings(
        prompt_source="humaneval",
        num_prompts=4,
        output_len=16,
        warmup=1,
        bracket=False,
        engine_cmd=list(cpu_engine.engine_cmd),
        server_args=list(cpu_engine.server_args),
    )
    plan = plan_from_methods(str(cpu_engine.model_dir), [("ngram", {"prompt_lookup_min": 2})], [2], settings)
    real = VllmServerFactory(env=dict(cpu_engine.env), ready_timeout_s=600)
    servers = []

    def factory(arm, session, placement=None):
        server = real(arm, session, placement=placement)
        servers.append(server)
        return server

    with Store.open(tmp_path / "p.db") as store:
        events = [e async for e in SweepRunner(plan, store, server_factory=factory, slots=cpu_slots([0, 1], 2)).events()]
        session = store.get_session(plan.session.id)
    assert isinstance(events[-1], SweepFinished)
    assert len(servers) == 2 and not any(s.running for s in servers)
    assert len({s.port for s in servers}) == 2 and len({s.spec.log_path for s in servers}) == 2
    assert sorted(s.spec.env["VLLM_CPU_OMP_THREADS_BIND"] for s in servers) == ["0", "1"]
    for server in servers:  # vLLM itself reports the binding it applied
        log = server.spec.log_path.read_text()
        assert f"VLLM_CPU_OMP_THREADS_BIND='{server.spec.env['VLLM_CPU_OMP_THREADS_BIND']}'" in log
    for arm_id in ("baseline", "ngram-n2"):
        r = session.result_for(arm_id)
        assert r.status == ArmStatus.ok and r.completed == 4, r.error
        assert r.wave == 1 and r.placement in {"cores 0", "cores 1"}
    assert {session.result_for(a).placement for a in ("baseline", "ngram-n2")} == {"cores 0", "cores 1"}
    kinds = [e.kind for e in events]
    first_done = kinds.index("arm_finished")
    assert kinds[:first_done].count("server_starting") == 2  # both servers were up before either arm finished
