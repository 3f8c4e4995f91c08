"""Every kind of rule-file mistake gives one line naming the file, the line and the fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from specadvisor.errors import InputError
from specadvisor.rulebase import load_rulebase


def _load(tmp_path: Path, text: str, name: str = "mine.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path, load_rulebase([tmp_path], include_user=False)


def _error(tmp_path: Path, text: str) -> tuple[Path, InputError]:
    with pytest.raises(InputError) as info:
        _load(tmp_path, text)
    return tmp_path / "mine.toml", info.value


GOOD_RULE_HEAD = """
[[evidence]]
id = "my-ev"
summary = "measured by us"
source = "our lab"
"""

CASES = [
    # (name, toml text, expected line, words the message must contain)
    ("toml syntax", '[[rule]]\nid = "x"\nwhy = oops\n', 3, ["not valid TOML"]),
    ("unknown table", '[[rules]]\nid = "x"\n', 1, ["unknown table 'rules'"]),
    ("table not array", '[rule]\nid = "x"\nwhy = "y"\n', 1, ["[[rule]]"]),
    (
        "unknown nested key",
        '[[rule]]\nid = "r1"\nwhy = "because"\n[rule.when]\nworkload = ["chat"]\nconcurency_min = 4\n',
        6,
        ["unknown key 'when.concurency_min'", "concurrency_min"],
    ),
    ("missing key", '[[rule]]\nid = "r1"\n\n[[rule]]\nid = "r2"\nwhy = "ok"\n', 1, ["missing required key 'why'"]),
    (
        "wrong type",
        '[[model]]\nid = "m"\nmatch = ["*m*"]\nparams_b = "big"\n',
        4,
        ["'params_b'", "'big'"],
    ),
    (
        "wrong type in second table",
        '[[gpu]]\nid = "g1"\nname = "G1"\nvendor = "nvidia"\nmemory_gib = 10\narch = "sm_90"\n\n'
        '[[gpu]]\nid = "g2"\nname = "G2"\nvendor = "intel"\nmemory_gib = 10\narch = "x"\n',
        11,
        ["gpu 'g2'", "'vendor'"],
    ),
    (
        "missing evidence",
        GOOD_RULE_HEAD + '\n[[rule]]\nid = "r1"\nwhy = "because"\nevidence = ["my-ev", "nope"]\n',
        9,
        ["cites missing evidence 'nope'"],
    ),
    (
        "drafter unknown method",
        '[[drafter]]\ndrafter = "me/d"\ntarget = "me/t"\nmethod = "eagle4"\nsource = "us"\n',
        4,
        ["unknown method 'eagle4'"],
    ),
    (
        "drafter unknown speculators type",
        '[[drafter]]\ndrafter = "me/d"\ntarget = "me/t"\nmethod = "eagle3"\nformat = "speculators/eagle9"\nsource = "us"\n',
        5,
        ["unknown speculators type 'eagle9'"],
    ),
    (
        "drafter format not speculators",
        '[[drafter]]\ndrafter = "me/d"\ntarget = "me/t"\nmethod = "eagle3"\nformat = "gguf"\nsource = "us"\n',
        5,
        ["'format'"],
    ),
    (
        "evidence unknown method",
        '[[evidence]]\nid = "e"\nsummary = "s"\nsource = "s"\nmethod = "warp"\n',
        5,
        ["unknown method 'warp'"],
    ),
    (
        "rule unknown method in effect",
        '[[rule]]\nid = "r1"\nwhy = "because"\n[rule.then]\nscore = { eagle9 = 1.0 }\n',
        5,
        ["unknown method 'eagle9'"],
    ),
    (
        "rule unknown family",
        '[[rule]]\nid = "r1"\nwhy = "because"\n[rule.when]\nmodel_family = ["no-such-family"]\n',
        5,
        ["unknown model family 'no-such-family'"],
    ),
    (
        "rule unknown config key",
        '[[rule]]\nid = "r1"\nwhy = "because"\n[rule.then]\nconfig = { dflash = { attn_backend = "triton_attn" } }\n',
        5,
        ["unknown config key 'attn_backend'"],
    ),
    (
        "rule about unknown method",
        '[[rule]]\nid = "r1"\nwhy = "because"\n[rule.then]\nabout = ["eagle7"]\n',
        5,
        ["unknown method 'eagle7'"],
    ),
    ("duplicate id", '[[rule]]\nid = "r1"\nwhy = "a"\n\n[[rule]]\nid = "r1"\nwhy = "b"\n', 5, ["defined twice"]),
    (
        "bad version",
        '[[method]]\nid = "m2"\nname = "M2"\nvllm_method = "ngram"\nmin_version = "soon"\n',
        5,
        ["not a version"],
    ),
    (
        "empty grid",
        '[[method]]\nid = "m3"\nname = "M3"\nvllm_method = "ngram"\ndefault_n_grid = []\n',
        5,
        ["default_n_grid"],
    ),
]


@pytest.mark.parametrize("name,text,line,words", CASES, ids=[c[0] for c in CASES])
def test_rule_file_error_names_file_line_and_fix(tmp_path, name, text, line, words):
    path, err = _error(tmp_path, text)
    message = err.one_line()
    assert "\n" not in message
    assert f"{path}:{line}" in message, message
    for word in words:
        assert word in message, message
    assert err.exit_code == 2
    assert err.hint  # every error says what to do


def test_missing_rules_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="rules folder not found"):
        load_rulebase([tmp_path / "absent"], include_user=False)


def test_user_entry_overrides_shipped_by_id_and_keeps_rule_order(tmp_path):
    shipped = load_rulebase(include_user=False)
    order = [r.id for r in shipped.rules]
    _, rb = _load(
        tmp_path,
        """
        [[gpu]]
        id = "h100-sxm"
        name = "H100 (my lab's)"
        names = ["h100"]
        vendor = "nvidia"
        memory_gib = 64
        arch = "sm_90"

        [[rule]]
        id = "sweep-not-adopt"
        why = "Our own wording."

        [[rule]]
        id = "our-extra-rule"
        why = "We always try suffix first."
        [rule.then]
        score = { suffix = 5 }
        """,
    )
    h100 = next(g for g in rb.gpus if g.id == "h100-sxm")
    assert h100.memory_gib == 64
    assert len(rb.gpus) == len(shipped.gpus)
    assert [r.id for r in rb.rules] == [*order, "our-extra-rule"]
    assert next(r for r in rb.rules if r.id == "sweep-not-adopt").why == "Our own wording."


def test_user_rules_folder_from_settings_is_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    folder = tmp_path / "config" / "rules"
    folder.mkdir(parents=True)
    (folder / "drafters.toml").write_text(
        '[[drafter]]\ndrafter = "me/my-llama-eagle3"\ntarget = "me/my-llama"\nmethod = "eagle3"\nsource = "our training run"\n'
    )
    rb = load_rulebase()
    assert any(d.drafter == "me/my-llama-eagle3" for d in rb.drafters)
    assert not any(d.drafter == "me/my-llama-eagle3" for d in load_rulebase(include_user=False).drafters)
