"""Prompt sources: real packaged sets, the project's own sets, user files, fitting max_model_len."""

import json

import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.prompts import fit_prompts, load_prompts
from specadvisor.errors import InputError


def test_humaneval_is_code_completion_and_seeded():
    a = load_prompts("humaneval", 10, seed=3)
    b = load_prompts("humaneval", 10, seed=3)
    c = load_prompts("humaneval", 10, seed=4)
    assert not a.chat and not a.synthetic
    assert [p.id for p in a.prompts] == [p.id for p in b.prompts] != [p.id for p in c.prompts]
    assert all(p.id.startswith("HumanEval/") and "def " in p.text for p in a.prompts)
    assert len({p.id for p in a.prompts}) == 10


def test_sharegpt_first_human_turn_as_chat():
    ps = load_prompts("sharegpt", 20, seed=0)
    assert ps.chat and len(ps.prompts) == 20
    assert all(p.messages[0]["role"] == "user" and p.messages[0]["content"].strip() for p in ps.prompts)


@pytest.mark.parametrize("name", ["math", "rag"])
def test_project_sets_are_real_chat_prompts(name):
    ps = load_prompts(name, 40, seed=0)
    assert ps.chat and not ps.synthetic and len({p.id for p in ps.prompts}) == 40
    if name == "rag":
        assert all("Context:" in p.messages[0]["content"] and "Question:" in p.messages[0]["content"] for p in ps.prompts)


def test_random_is_flagged_synthetic():
    ps = load_prompts("random", 4)
    assert ps.synthetic and any("synthetic" in n for n in ps.notes)


def test_more_requests_than_prompts_repeat_with_a_note(tmp_path):
    f = tmp_path / "two.txt"
    f.write_text("first prompt\n\nsecond prompt\n")
    ps = load_prompts(str(f), 5)
    assert len(ps.prompts) == 5 and {p.text for p in ps.prompts} == {"first prompt", "second prompt"}
    assert "repeat" in ps.notes[0]


def test_user_jsonl_prompt_and_messages(tmp_path):
    f = tmp_path / "mine.jsonl"
    f.write_text(json.dumps({"prompt": "hello"}) + "\n" + json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    ps = load_prompts(str(f), 2, seed=1)
    assert ps.chat  # one chat line makes the whole set chat
    assert sorted(p.messages[0]["content"] for p in ps.prompts) == ["hello", "hi"]


def test_user_sharegpt_json(tmp_path):
    f = tmp_path / "sg.json"
    f.write_text(
        json.dumps(
            [
                {"id": "a", "conversations": [{"from": "human", "value": "Q1"}, {"from": "gpt", "value": "A1"}]},
                {"id": "b", "conversations": [{"from": "human", "value": "lonely"}]},
            ]
        )
    )
    ps = load_prompts(str(f), 1)
    assert ps.chat and ps.prompts[0].id == "a"


@pytest.mark.parametrize(
    "content,match",
    [
        ('{"prompt": "ok"}\n{oops\n', r"bad\.jsonl:2: not valid JSON"),
        ('{"text": "no prompt key"}\n', "no usable prompt"),
        ("", "holds no prompts"),
    ],
)
def test_bad_user_files_are_one_line_input_errors(tmp_path, content, match):
    f = tmp_path / "bad.jsonl"
    f.write_text(content)
    with pytest.raises(InputError, match=match) as err:
        load_prompts(str(f), 1)
    assert "\n" not in str(err.value) and err.value.hint


def test_unknown_source_and_bad_count():
    with pytest.raises(InputError, match="unknown prompt source 'nope'"):
        load_prompts("nope", 1)
    with pytest.raises(InputError, match="at least 1"):
        load_prompts("math", 0)


def test_undecodable_file(tmp_path):
    f = tmp_path / "bin.txt"
    f.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match="cannot read prompt file"):
        load_prompts(str(f), 1)


async def test_fit_with_server_tokenizer_drops_and_counts(tmp_path):
    f = tmp_path / "len.txt"
    f.write_text("a b c\n" + " ".join(["w"] * 50) + "\nd e\n")
    server = await FakeServer(FakeConfig()).start()
    try:
        ps = load_prompts(str(f), 3, seed=0)
        fitted = await fit_prompts(ps, base_url=server.base_url, model_name="m", output_len=20, max_model_len=40)
    finally:
        await server.stop()
    assert fitted.dropped == 1 and len(fitted.prompts) == 2
    assert sorted(p.tokens for p in fitted.prompts) == [2, 3]
    assert "server tokenizer" in fitted.notes[-1]


async def test_fit_without_server_uses_conservative_estimate():
    ps = load_prompts("humaneval", 30, seed=0)
    fitted = await fit_prompts(ps, base_url=None, model_name=None, output_len=100, max_model_len=250)
    assert fitted.dropped > 0 and all(p.tokens * 3 >= p.chars for p in fitted.prompts)
    assert all(p.tokens + 100 <= 250 for p in fitted.prompts)
    with pytest.raises(InputError, match="no prompt"):
        await fit_prompts(ps, base_url=None, model_name=None, output_len=100, max_model_len=101)
    with pytest.raises(InputError, match="leaves no room"):
        await fit_prompts(ps, base_url=None, model_name=None, output_len=100, max_model_len=100)


async def test_fit_falls_back_to_estimate_without_tokenize_endpoint():
    server = await FakeServer(FakeConfig()).start()
    original = server._route

    async def no_tokenize(method, path, body, writer):
        await original(method, "/missing" if path == "/tokenize" else path, body, writer)

    server._route = no_tokenize
    try:
        ps = load_prompts("humaneval", 5, seed=0)
        fitted = await fit_prompts(ps, base_url=server.base_url, model_name="m", output_len=16, max_model_len=4096)
    finally:
        await server.stop()
    assert fitted.dropped == 0 and "no /tokenize" in fitted.notes[-1]
    assert all(p.tokens == -(-p.chars // 3) for p in fitted.prompts)
