"""What crosses from a bundle into a command run here (`sweep --resume ID --rebuild`, `export-plan`,
the report's serve-params): only the allow-list of specadvisor.crossing.

The sweep runs through main() with the real plan, runner, VllmServerFactory, ServerSpec and
build_command; only the process is replaced (a recorder at specadvisor.engine.server.VllmServer)
and the load generator, so each case asserts the argv that would have been launched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hostile_helpers import assert_one_line_error

from specadvisor import crossing, setting_specs
from specadvisor.domain import Arm, SweepSettings
from specadvisor.engine import server as server_module
from specadvisor.engine.spec import build_command
from specadvisor.rulebase import default_rulebase
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document
from specadvisor.sweep import runner as runner_module
from store_samples import make_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from sweep_fakes import FakeMeasure, FakeServer

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # the catalog publishes EAGLE-3 drafters for it


@pytest.fixture
def launched(monkeypatch):
    """The argv of every server the sweep would have started (built by the real build_command)."""
    argvs: list[list[str]] = []

    class Recorder(FakeServer):
        def __init__(self, spec):
            super().__init__(Arm(id=f"a{len(argvs)}", label="x"))
            self.command = build_command(spec, 8000)
            argvs.append(self.command)

    monkeypatch.setattr(server_module, "VllmServer", Recorder)
    monkeypatch.setattr(runner_module, "_default_measure", FakeMeasure(lambda arm: 100.0 + 10 * (arm.n or 0)))
    monkeypatch.setattr(runner_module, "_default_prompt_loader", lambda session: None)
    return argvs


def _spec_arm(arm_id: str, config: dict, n: int | None = 2) -> Arm:
    method = config.get("method")
    return Arm(id=arm_id, label=arm_id, method=method if isinstance(method, str) else None, n=n, speculative_config=config)


def _import(tmp_path, cli, arms: list[Arm], **settings) -> tuple[Path, str]:
    session = make_session(status="finished")
    session.arms = [session.arms[0], *arms]
    session.results = session.results[:1]
    session.samples = []
    session.recommendation = None
    session.settings = session.settings.replace(**settings)
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert code == 0, err
    return db, session.id[:8]


def _rebuild(cli, db, sid, *extra) -> tuple[int, str, str]:
    return cli(["--db", str(db), "sweep", "--resume", sid, "--rebuild", "--json", "--no-bracket", "--parallel", "1", *extra])


def _spec_configs(argvs: list[list[str]]) -> list[dict]:
    return [json.loads(argv[argv.index("--speculative-config") + 1]) for argv in argvs if "--speculative-config" in argv]


def test_drafter_path_and_trust_remote_code_never_reach_the_argv(tmp_path, cli, launched):
    evil = {"method": "ngram", "model": "/tmp/evil-drafter", "trust_remote_code": True, "num_speculative_tokens": 2}
    db, sid = _import(tmp_path, cli, [_spec_arm("ngram-n2", evil)])
    code, _, err = _rebuild(cli, db, sid, "--model", "m")
    assert code == 0, err
    joined = " ".join(" ".join(a) for a in launched)
    assert "evil" not in joined and "trust_remote_code" not in joined and "trust-remote-code" not in joined
    assert _spec_configs(launched) == [{"method": "ngram", "num_speculative_tokens": 2}]
    assert "ignored speculative-config keys from the bundle" in err and "model" in err and "trust_remote_code" in err


def test_a_bundles_hub_drafter_is_dropped_and_the_arm_named(tmp_path, cli, launched):
    arms = [
        _spec_arm("eagle3-n3", {"method": "eagle3", "model": "attacker/remote-code-drafter", "num_speculative_tokens": 3}, 3),
        _spec_arm("ngram-n2", {"method": "ngram", "num_speculative_tokens": 2}),
    ]
    db, sid = _import(tmp_path, cli, arms)
    code, _, err = _rebuild(cli, db, sid, "--model", "m")  # no catalog drafter for "m", no --drafter
    assert code == 0, err
    assert "dropped arm eagle3-n3: EAGLE-3 needs a drafter" in err and "--drafter" in err
    assert "attacker" not in " ".join(" ".join(a) for a in launched)
    assert [c["method"] for c in _spec_configs(launched)] == ["ngram"]


def test_the_drafter_comes_from_the_users_flag(tmp_path, cli, launched):
    db, sid = _import(tmp_path, cli, [_spec_arm("eagle3-n3", {"method": "eagle3", "model": "attacker/x", "num_speculative_tokens": 3}, 3)])
    code, _, err = _rebuild(cli, db, sid, "--model", "m", "--drafter", "me/my-drafter")
    assert code == 0, err
    assert _spec_configs(launched) == [{"method": "eagle3", "num_speculative_tokens": 3, "model": "me/my-drafter"}]


def test_the_drafter_comes_from_this_machines_catalog(tmp_path, cli, launched):
    db, sid = _import(tmp_path, cli, [_spec_arm("eagle3-n3", {"method": "eagle3", "model": "attacker/x", "num_speculative_tokens": 3}, 3)])
    code, _, err = _rebuild(cli, db, sid, "--model", LLAMA)
    assert code == 0, err
    (config,) = _spec_configs(launched)
    published = {d.drafter for d in default_rulebase().drafters if d.method == "eagle3" and not d.parallel_drafting}
    assert config["model"] in published and "attacker" not in config["model"]


@pytest.mark.parametrize("method", ["../../../../x", "ngram; rm -rf ~", "x" * 65, "custom_class", ""])
def test_a_method_the_registry_does_not_offer_never_launches(tmp_path, cli, launched, method):
    arms = [_spec_arm("bad", {"method": method, "num_speculative_tokens": 2}), _spec_arm("ngram-n2", {"method": "ngram", "num_speculative_tokens": 2})]
    db, sid = _import(tmp_path, cli, arms)
    code, _, err = _rebuild(cli, db, sid, "--model", "m", "--drafter", "me/d")
    assert code == 0, err
    assert "dropped arm bad: method" in err
    assert [c["method"] for c in _spec_configs(launched)] == ["ngram"]
    assert not any("../" in part or "rm -rf" in part for argv in launched for part in argv)


def test_strings_booleans_and_out_of_bound_numbers_do_not_cross(tmp_path, cli, launched):
    config = {
        "method": "ngram",
        "num_speculative_tokens": 2,
        "prompt_lookup_max": 4,  # declared for ngram, within 1..1024: crosses
        "prompt_lookup_min": 10**9,  # above its declared max
        "quantization": "$(touch /tmp/pwned)",
        "enforce_eager": True,
        "max_model_len": 1.5,  # an int key given a float
        "draft_tensor_parallel_size": True,  # a bool is not a number
        "suffix_decoding_max_tree_depth": 8,  # a suffix key, not declared for ngram
        "draft_load_config": {"x": 1},
        "parallel_drafting": True,
    }
    db, sid = _import(tmp_path, cli, [_spec_arm("ngram-n2", config)])
    code, _, err = _rebuild(cli, db, sid, "--model", "m")
    assert code == 0, err
    assert _spec_configs(launched) == [{"method": "ngram", "prompt_lookup_max": 4, "num_speculative_tokens": 2}]


def test_n_beyond_the_methods_own_limit_is_dropped(tmp_path, cli, launched):
    arms = [
        _spec_arm("dflash-n40", {"method": "dflash", "num_speculative_tokens": 40}, 40),
        _spec_arm("ngram-n2", {"method": "ngram", "num_speculative_tokens": 2}),
    ]
    db, sid = _import(tmp_path, cli, arms)
    code, _, err = _rebuild(cli, db, sid, "--model", "m", "--drafter", "me/d")
    assert code == 0, err
    assert "dropped arm dflash-n40: N 40 is not a whole number from 1 to 15" in err
    assert [c["method"] for c in _spec_configs(launched)] == ["ngram"]


def test_nothing_left_to_rebuild_is_one_line_and_nothing_launched(tmp_path, cli, launched):
    db, sid = _import(tmp_path, cli, [_spec_arm("eagle3-n3", {"method": "eagle3", "model": "attacker/x", "num_speculative_tokens": 3}, 3)])
    code, out, err = _rebuild(cli, db, sid, "--model", "m")
    assert_one_line_error(code, err, 2)
    assert "can be rebuilt here" in err and out == "" and launched == []


@pytest.mark.parametrize(
    "field, value",
    [
        ("num_prompts", 9223372036854775807),
        ("num_prompts", 1_000_001),
        ("output_len", 10**7),
        ("trials", 10**6),
        ("warmup", 10**9),
        ("seed", -1),
        ("temperature", 2.5),
        ("request_rate", 1e300),
        ("slo_tpot_ms", 1e300),
        ("concurrency", [200_000]),
    ],
)
def test_settings_beyond_the_cli_bounds_are_refused_at_import(tmp_path, cli, field, value):
    document = bundle_document(make_session())  # the model itself refuses the value: the file carries it
    document["session"]["settings"][field] = value
    path = tmp_path / "b.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert_one_line_error(code, err, 2)
    assert f"settings.{field}" in err and not db.exists()


def test_export_plan_and_the_report_carry_only_the_allow_list(tmp_path, cli):
    config = {"method": "ngram", "num_speculative_tokens": 2, "quantization": "$(touch /tmp/pwned)", "model": "attacker/x", "trust_remote_code": True}
    arms = [_spec_arm("ngram-n2", config), _spec_arm("eagle3-n3", {"method": "eagle3", "model": "attacker/y", "num_speculative_tokens": 3}, 3)]
    db, sid = _import(tmp_path, cli, arms)
    params_file = tmp_path / "params.json"
    code, out, err = cli(["--db", str(db), "export-plan", sid, "--serve-params", str(params_file)])
    assert code == 0, err
    params = json.loads(params_file.read_text())
    assert params[:2] == [
        {"_benchmark_name": "baseline"},
        {"_benchmark_name": "ngram-n2", "speculative_config": {"method": "ngram", "num_speculative_tokens": 2}},
    ]
    published = {d.drafter for d in default_rulebase().drafters}
    assert params[2]["speculative_config"]["model"] in published  # Qwen3-8B's catalog drafter, not the bundle's
    assert "attacker" not in params_file.read_text() and "touch" not in out
    code, out, err = cli(["--db", str(db), "export-plan", sid, "--serve-params", str(params_file), "--drafter", "me/d", "--force"])
    assert code == 0, err
    assert {"method": "eagle3", "num_speculative_tokens": 3, "model": "me/d"} in [p.get("speculative_config") for p in json.loads(params_file.read_text())]
    for fmt in ("md", "html"):
        code, report, err = cli(["--db", str(db), "report", sid, "--format", fmt])
        assert code == 0, err
        assert "touch" not in report and "attacker" not in report and "trust_remote_code" not in report


def test_a_bundle_model_that_is_a_flag_never_reaches_export_plan(tmp_path, cli):
    session = make_session()
    session.model = "--trust-remote-code"
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(["--db", str(db), "sessions", "import", str(path)])[0] == 0
    code, out, err = cli(["--db", str(db), "export-plan", session.id[:8], "--serve-params", str(tmp_path / "p.json")])
    assert code == 0, err
    assert "trust-remote-code" not in out and "vllm serve MODEL" in out


# ------------------------------------------------------------------ the allow-list itself

# Everything that may cross, listed here on purpose: a key or setting that starts crossing fails
# these tests until it is added to this list (and to docs/security.md) as a deliberate decision.
CROSSING_CONFIG_KEYS = {
    ("ngram", "prompt_lookup_min"),
    ("ngram", "prompt_lookup_max"),
    ("ngram_gpu", "prompt_lookup_min"),
    ("ngram_gpu", "prompt_lookup_max"),
    ("*", "draft_tensor_parallel_size"),
    ("*", "max_model_len"),
    ("suffix", "suffix_decoding_max_tree_depth"),
    ("suffix", "suffix_decoding_max_cached_requests"),
    ("suffix", "suffix_decoding_max_spec_factor"),
    ("suffix", "suffix_decoding_min_token_prob"),
    ("dspark", "dspark_draft_topk"),
}
CROSSING_SETTINGS = {"num_prompts", "output_len", "temperature", "seed", "warmup", "trials", "concurrency", "request_rate", "slo_tpot_ms", "slo_ttft_ms"}


def test_only_the_listed_config_keys_can_cross():
    rb = default_rulebase()
    crossing_keys = {
        ("*" if not spec.methods else method, key)
        for key, spec in rb.config_keys.items()
        for method in (spec.methods or ["*"])
        if spec.type in crossing.NUMERIC_KEY_TYPES and spec.min_value is not None and spec.max_value is not None
    }
    assert crossing_keys == CROSSING_CONFIG_KEYS


def test_every_key_offered_by_the_rules_crosses_only_if_listed():
    """Each declared key, at a value within its bounds and as a string/bool, on every offered method."""
    rb = default_rulebase()
    for method in rb.methods.values():
        if not method.offer:
            continue
        config = {"method": method.vllm_method, "num_speculative_tokens": 1}
        for key, spec in rb.config_keys.items():
            if key not in crossing.REDERIVED_KEYS:
                config[key] = int(spec.min_value) if spec.min_value is not None and spec.type == "int" else (spec.min_value or 1)
        session = make_session()
        session.provenance.origin = "imported"
        session.arms = [Arm(id="a", label="a", method=method.vllm_method, n=1, speculative_config=config)]
        result = crossing.crossing_arms(session, target_model="m", drafter="me/d")
        for arm in result.arms:
            for key in arm.keys:
                assert ("*", key) in CROSSING_CONFIG_KEYS or (method.vllm_method, key) in CROSSING_CONFIG_KEYS, (method.id, key)


def test_only_the_listed_settings_cross():
    assert set(crossing.CROSSING_SETTINGS) == CROSSING_SETTINGS
    # the allow-list stays an explicit list (a security decision), but every name on it is a declared
    # setting of the model, with a bound the crossing value is checked against
    assert set(crossing.CROSSING_SETTINGS) <= set(SweepSettings.model_fields)
    assert set(crossing.CROSSING_SETTINGS) <= set(setting_specs.SPECS)
    hostile = SweepSettings(
        prompt_source="/etc/shadow",
        endpoint="http://evil.example",
        engine_cmd=["/bin/sh", "-c", "x"],
        server_args=["--trust-remote-code"],
        max_model_len=7,
        goodput=True,
        bracket=False,
        drift_threshold=0.5,
        parallel=9,
        parallel_choice="9",
        ci_target=0.5,
    )
    crossed = crossing.crossing_settings(hostile)
    assert set(crossed) == CROSSING_SETTINGS
    assert all(crossed[name] == getattr(hostile, name) for name in crossed)


def test_printed_commands_of_an_imported_session_carry_only_the_allow_list(tmp_path, cli):
    """snippet, snippet --command, sessions show and the report print the recommended config to be
    pasted and run: an imported one goes through the same allow-list as a rebuild."""
    config = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "model": "attacker/x", "trust_remote_code": True, "quantization": "$(id)"}
    session = make_session()
    session.arms[2].speculative_config = config
    session.recommendation.speculative_config = config
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(["--db", str(db), "sessions", "import", str(path)])[0] == 0
    sid = session.id[:8]
    code, out, err = cli(["--db", str(db), "snippet", sid])
    assert code == 0, err
    assert json.loads(out) == {"method": "ngram", "prompt_lookup_max": 4, "num_speculative_tokens": 4}
    for argv in (["snippet", sid, "--command"], ["sessions", "show", sid], ["report", sid]):
        code, out, err = cli(["--db", str(db), *argv])
        assert code == 0, err
        assert "attacker" not in out and "trust_remote_code" not in out and "$(id)" not in out, argv


def test_an_imported_recommendation_that_cannot_cross_is_one_line(tmp_path, cli):
    config = {"method": "eagle3", "num_speculative_tokens": 3, "model": "attacker/x"}
    session = make_session()
    session.model = "m"  # no catalog drafter
    session.arms[2].speculative_config = config
    session.recommendation.speculative_config = config
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(["--db", str(db), "sessions", "import", str(path)])[0] == 0
    code, out, err = cli(["--db", str(db), "snippet", session.id[:8], "--command"])
    assert_one_line_error(code, err, 2)
    assert out == "" and "attacker" not in err


# ------------------------------------------------------------------ the target model (round three)

EVIL_MODELS = ["attacker/remote-code-model", "../../../../home/victim/.ssh", "/tmp/evil model"]


def _import_model(tmp_path, cli, model: str, **settings) -> tuple[Path, str]:
    session = make_session(status="finished")
    session.model = model
    session.settings = session.settings.replace(**settings)
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert code == 0, err
    return db, session.id[:8]


@pytest.mark.parametrize("model", EVIL_MODELS)
def test_a_rebuild_never_serves_the_bundles_model(tmp_path, cli, launched, model):
    db, sid = _import_model(tmp_path, cli, model)
    code, out, err = _rebuild(cli, db, sid)
    assert_one_line_error(code, err, 2)
    assert "never serves a bundle's model" in err and "--model MODEL" in err and repr(model) in err
    assert launched == [] and out == ""


@pytest.mark.parametrize("model", EVIL_MODELS)
def test_a_rebuild_serves_the_model_the_user_names(tmp_path, cli, launched, model):
    db, sid = _import_model(tmp_path, cli, model)
    code, _, err = _rebuild(cli, db, sid, "--model", "me/my-model")
    assert code == 0, err
    assert launched and all("me/my-model" in argv for argv in launched)
    assert not any(model in part for argv in launched for part in argv)


def test_the_resume_refusal_hint_names_the_model_flag(tmp_path, cli):
    db, sid = _import_model(tmp_path, cli, EVIL_MODELS[0])
    code, _, err = cli(["--db", str(db), "sweep", "--resume", sid])
    assert_one_line_error(code, err, 2)
    assert f"specadvisor sweep --resume {sid} --rebuild --model MODEL" in err and EVIL_MODELS[0] not in err


@pytest.mark.parametrize("model", EVIL_MODELS)
def test_printed_commands_of_an_imported_session_name_a_placeholder_not_its_model(tmp_path, cli, model):
    db, sid = _import_model(tmp_path, cli, model)
    params = tmp_path / "p.json"
    for argv in (["snippet", sid, "--command"], ["export-plan", sid, "--serve-params", str(params)]):
        code, out, err = cli(["--db", str(db), *argv])
        assert code == 0, err
        assert model not in out and "serve MODEL" in out, argv
        assert "replace MODEL with the model to serve here" in err, argv
        params.unlink(missing_ok=True)
    code, out, err = cli(["--db", str(db), "sessions", "show", sid])
    assert code == 0, err
    assert "serve with: vllm serve MODEL" in out
    for fmt in ("md", "html"):
        code, report, err = cli(["--db", str(db), "report", sid, "--format", fmt])
        assert code == 0, err
        commands = list(report.split("vllm ")[1:])
        assert commands and not any(part.startswith(("serve " + model, "bench serve --model " + model)) for part in commands)
        assert "vllm serve MODEL" in report and "replace MODEL with the model to serve here" in report.replace("Replace", "replace")


def test_printed_commands_serve_the_model_given_with_model(tmp_path, cli):
    db, sid = _import_model(tmp_path, cli, EVIL_MODELS[0])
    code, out, err = cli(["--db", str(db), "snippet", sid, "--command", "--model", "me/my-model"])
    assert code == 0, err
    assert out.startswith("vllm serve me/my-model") and "MODEL" not in err
    code, out, err = cli(["--db", str(db), "export-plan", sid, "--serve-params", str(tmp_path / "p.json"), "--model", "me/my-model"])
    assert code == 0, err
    assert "vllm serve me/my-model" in out and "--model me/my-model" in out and EVIL_MODELS[0] not in out


def test_a_bundles_adaptive_setting_does_not_cross_a_rebuild(tmp_path, cli, launched):
    db, sid = _import_model(tmp_path, cli, "m", adaptive=True)
    code, _out, err = _rebuild(cli, db, sid, "--model", "me/m")
    assert code == 0, err
    with Store.open(db) as store:
        rebuilt = list(store.find_sessions(model="me/m"))
    assert len(rebuilt) == 1 and rebuilt[0].settings.adaptive is False
