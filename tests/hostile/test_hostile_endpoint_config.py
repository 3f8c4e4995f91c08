"""An endpoint's /server_info speculative config passes the bundles' allow-list (specadvisor.crossing)
before it is stored: the method from the registry, N, declared numbers. A drafter the server names,
`trust_remote_code`, a `quantization` of `$(...)`, a revision with a newline never reach the store,
`export-plan --serve-params`, the report or `engine probe`'s output (round three, high 2)."""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_one_line_error
from lying_stub import LyingEndpoint, N

from specadvisor.store import Store

FAST = ["--num-prompts", "2", "--output-len", "4", "--warmup", "0"]
HOSTILE_KEYS = {
    "model": "attacker/evil-drafter",
    "trust_remote_code": True,
    "quantization": "$(touch /tmp/pwned)",
    "revision": "main\nrm -rf ~",
    "draft_load_config": "x",
    "enforce_eager": True,
}
MARKERS = ("attacker", "evil-drafter", "trust_remote_code", "trust-remote-code", "touch", "rm -rf", "enforce_eager")


def _info(**config):
    return {"vllm_config": {"speculative_config": {"method": "ngram", "num_speculative_tokens": N, **config}}}


def test_only_the_allow_list_of_an_endpoints_config_is_stored_and_exported(tmp_path, cli):
    db = tmp_path / "s.db"
    with LyingEndpoint(server_info=_info(prompt_lookup_max=4, **HOSTILE_KEYS)) as stub:
        code, _out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST, "--json"])
    assert code == 0, err
    assert "not stored from the endpoint's speculative config" in err and "trust_remote_code" in err and "model" in err
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        session = store.get_session(summary.id)
    (arm,) = session.arms
    assert arm.speculative_config == {"method": "ngram", "prompt_lookup_max": 4, "num_speculative_tokens": N}
    sid = summary.id[:8]
    params = tmp_path / "params.json"
    code, out, err = cli(["--db", str(db), "export-plan", sid, "--serve-params", str(params)])
    assert code == 0, err
    assert json.loads(params.read_text()) == [{"_benchmark_name": "ngram-n3", "speculative_config": arm.speculative_config}]
    assert not any(m in out + params.read_text() for m in MARKERS)
    for argv in (["report", sid], ["report", sid, "--format", "html"], ["snippet", sid, "--command"], ["sessions", "show", sid, "--json"]):
        code, out, err = cli(["--db", str(db), *argv])
        assert code in (0, 1, 5), err
        assert not any(m in out for m in MARKERS), (argv, [m for m in MARKERS if m in out])


def test_engine_probe_shows_only_what_would_be_stored(tmp_path, cli):
    with LyingEndpoint(server_info=_info(**HOSTILE_KEYS)) as stub:
        for extra in ([], ["--json"]):
            code, out, err = cli(["engine", "probe", stub.url, *extra])
            assert code == 0, err
            assert '"method": "ngram"' in out or "'method': 'ngram'" in out or '"method":"ngram"' in out.replace(" ", "")
            assert not any(m in out for m in MARKERS), out


@pytest.mark.parametrize("method", ["evil; rm -rf ~", "../../x", "custom_class", "ngram\nrm -rf ~"])
def test_an_endpoint_method_the_registry_does_not_offer_is_one_line_and_nothing_stored(tmp_path, cli, method):
    db = tmp_path / "s.db"
    with LyingEndpoint(server_info={"speculative_config": {"method": method, "num_speculative_tokens": 2}}) as stub:
        code, out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST])
    assert_one_line_error(code, err, 4)
    assert "registry" in err and "rm -rf" not in out and not db.exists()


def test_p_eagle_keeps_its_registry_key_and_loses_the_drafter(tmp_path, cli):
    db = tmp_path / "s.db"
    info = {"speculative_config": {"method": "eagle3", "parallel_drafting": True, "num_speculative_tokens": 3, "model": "attacker/x"}}
    with LyingEndpoint(server_info=info) as stub:
        code, _out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST, "--json"])
    assert code == 0, err
    with Store.open(db) as store:
        (arm,) = store.get_session(store.list_sessions()[0].id).arms
    assert arm.speculative_config == {"method": "eagle3", "parallel_drafting": True, "num_speculative_tokens": 3}
