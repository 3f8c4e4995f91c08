"""Secrets never leave in a bundle; --redact-paths also strips home folders; numbers stay intact."""

from __future__ import annotations

from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.store.bundle import export_bundle, read_bundle
from specadvisor.store.redact import REDACTED, redact_argv, redact_text
from store_samples import make_session

SECRETS = [
    "sk-live-0123456789abcdefXYZ",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "s3cr3t-bearer-value",
    "envtokenvalue42",
    "dictsecretvalue",
    "pw-hunter2",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
]


def _leaky_session():
    session = make_session()
    arms = list(session.arms)
    arms[1] = arms[1].model_copy(
        update={
            "server_args": ["--api-key", SECRETS[0], "--max-num-batched-tokens", "8192"],
            "speculative_config": {"method": "ngram", "num_speculative_tokens": 2, "api_key": SECRETS[4]},
        }
    )
    results = list(session.results)
    results[1] = results[1].model_copy(
        update={
            "error_excerpt": f"\x1b[31mERROR\x1b[0m request failed: headers={{'Authorization': 'Bearer {SECRETS[2]}'}}",
            "log_path": "/home/alice/.local/share/specadvisor/logs/arm.log",
        }
    )
    return session.model_copy(
        update={
            "settings": SweepSettings(
                engine_cmd=["env", f"HF_TOKEN={SECRETS[1]}", "/home/alice/venv/bin/python"],
                server_args=[f"--hf-token={SECRETS[1]}", "--password", SECRETS[5], "--num-speculative-tokens", "4"],
            ),
            "arms": arms,
            "results": results,
            "notes": f"launched with OPENAI_API_KEY={SECRETS[3]} and token {SECRETS[6]}",
        }
    )


def test_no_secret_reaches_the_bundle(tmp_path):
    text = export_bundle(_leaky_session(), tmp_path / "s.json").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text
    assert text.count(REDACTED) >= len(SECRETS)


def test_redaction_keeps_everything_that_is_not_secret(tmp_path):
    original = _leaky_session()
    exported = read_bundle(export_bundle(original, tmp_path / "s.json"))
    assert exported.settings.server_args == ["--hf-token=<redacted>", "--password", REDACTED, "--num-speculative-tokens", "4"]
    assert exported.arms[1].server_args == ["--api-key", REDACTED, "--max-num-batched-tokens", "8192"]
    assert exported.arms[1].speculative_config == {"method": "ngram", "num_speculative_tokens": 2, "api_key": REDACTED}
    assert exported.settings.engine_cmd == ["env", "HF_TOKEN=<redacted>", "/home/alice/venv/bin/python"]
    assert exported.results[1].error_excerpt.startswith("ERROR request failed")  # terminal escapes dropped
    assert exported.model_dump(exclude={"settings", "arms", "results", "notes"}) == original.model_dump(exclude={"settings", "arms", "results", "notes"})
    assert [r.per_position for r in exported.results] == [r.per_position for r in original.results]


def test_home_paths_stay_unless_redact_paths(tmp_path):
    kept = export_bundle(_leaky_session(), tmp_path / "a.json").read_text(encoding="utf-8")
    stripped = export_bundle(_leaky_session(), tmp_path / "b.json", redact_paths=True).read_text(encoding="utf-8")
    assert "/home/alice" in kept
    assert "/home/alice" not in stripped
    assert "~/.local/share/specadvisor/logs/arm.log" in stripped


def test_redact_text_cases():
    assert redact_text("curl -H 'Authorization: Basic dXNlcjpwYXNz' x") == "curl -H 'Authorization: <redacted>' x"
    assert redact_text("vllm serve m --api-key abc --port 8000") == "vllm serve m --api-key <redacted> --port 8000"
    assert redact_text("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI") == "export AWS_SECRET_ACCESS_KEY=<redacted>"
    assert redact_text("--num-speculative-tokens 5 --max-tokens 9") == "--num-speculative-tokens 5 --max-tokens 9"
    assert redact_text("http://bob:pa55@gpu-box:8000/v1") == "http://bob:<redacted>@gpu-box:8000/v1"
    assert redact_text("https://h/x?token=abc&n=4") == "https://h/x?token=<redacted>&n=4"
    assert redact_text("mean acceptance per token: 0.71") == "mean acceptance per token: 0.71"


def test_redact_argv_hides_the_value_after_a_secret_flag():
    assert redact_argv(["serve", "--token", "x1", "--port", "1"]) == ["serve", "--token", REDACTED, "--port", "1"]
    assert redact_argv(["--api-key=x2"]) == ["--api-key=<redacted>"]


def test_fields_added_later_are_covered_too():
    """Redaction walks the JSON form, so any string field is scanned, e.g. warnings."""
    result = ArmResult(arm_id="a", warnings=[f"server said HF_TOKEN={SECRETS[1]}"])
    session = make_session(arms=[Arm(id="a", label="a")], results=[result])
    from specadvisor.store.redact import redact_session

    assert SECRETS[1] not in redact_session(session).model_dump_json()


def test_a_session_is_redacted_field_by_field_as_a_whole_and_clean_fields_are_not_rebuilt():
    from specadvisor.redact import redact_value as redact_whole
    from specadvisor.store.redact import redact_session

    session = make_session(notes="reach it with Authorization: Bearer abcdefghijklmnop1234")
    session.recommendation.reasons.append("measured at concurrency 1, 256 output tokens")  # a "maybe" in every verdict
    redacted = redact_session(session)
    data = session.model_dump(mode="json")
    expected = Session.model_validate({"id": data.pop("id"), **redact_whole(data)})
    assert redacted == expected and "abcdefghijklmnop1234" not in redacted.notes
    kept = [*zip(redacted.arms, session.arms, strict=True), *zip(redacted.results, session.results, strict=True)]
    assert all(new is old for new, old in kept)  # nothing secret-shaped there: kept, not dumped and rebuilt
