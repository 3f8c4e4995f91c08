"""Prompt sources: real packaged sets, the project's own sets, user files, fitting max_model_len."""

import json

import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.prompts import fit_prompts, load_prompts
from specadvisor.errors import InputError


def test_humaneval_is_seeded_and_goes_through_the_chat_template_as_vllm_bench_serve_sends_it():
    a = load_prompts("humaneval", 10, seed=3)
    b = load_prompts("humaneval", 10, seed=3)
    c = load_prompts("humaneval", 10, seed=4)
    assert a.chat and a.request_format == "chat" and not a.synthetic  # vLLM's HumanEvalDataset applies the chat template
    assert [p.id for p in a.prompts] == [p.id for p in b.prompts] != [p.id for p in c.prompts]
    assert all(p.id.startswith("HumanEval/") and p.text is None and p.messages[0]["role"] == "user" for p in a.prompts)
    raw = load_prompts("humaneval", 10, seed=3, request_format="completions")  # code completion, when asked
    assert not raw.chat and all("def " in p.text and p.messages is None for p in raw.prompts)
    assert [p.text for p in raw.prompts] == [p.messages[0]["content"] for p in a.prompts]
    assert any("chat template" in n for n in raw.notes)  # the difference from vllm bench serve is said


def test_sharegpt_first_human_turn_as_raw_text_as_vllm_bench_serve_sends_it():
    ps = load_prompts("sharegpt", 20, seed=0)
    assert not ps.chat and ps.request_format == "completions" and len(ps.prompts) == 20  # --dataset-name sharegpt: no template
    assert all(p.text.strip() and p.messages is None for p in ps.prompts)
    chat = load_prompts("sharegpt", 20, seed=0, request_format="chat")
    assert [p.messages for p in chat.prompts] == [[{"role": "user", "content": p.text}] for p in ps.prompts]


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
    ps = load_prompts(str(f), 5, request_format="completions")
    assert len(ps.prompts) == 5 and {p.text for p in ps.prompts} == {"first prompt", "second prompt"}
    assert any("repeat" in note for note in ps.notes)


def test_user_jsonl_prompt_and_messages(tmp_path):
    f = tmp_path / "mine.jsonl"
    f.write_text(json.dumps({"prompt": "hello"}) + "\n" + json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    ps = load_prompts(str(f), 2, seed=1)
    assert ps.chat  # a JSONL file goes through the chat template, as `vllm bench serve --dataset-name custom` sends it
    assert sorted(p.messages[0]["content"] for p in ps.prompts) == ["hello", "hi"]
    assert any("1 of 2 rows have no `prompt`" in n and "cannot read this file" in n for n in ps.notes)


def _both_fields(tmp_path, rows):
    f = tmp_path / "edits.jsonl"
    f.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(f)


def test_rows_with_messages_and_prompt_go_through_the_chat_template_not_as_raw_text(tmp_path):
    """The H200 case (issue 38): every row had `prompt` and `messages`; the prompt went to
    /v1/completions as raw text while `vllm bench serve` applied the chat template (2.03x vs 1.08x)."""
    rows = [{"id": f"e{i}", "prompt": f"copy {i}", "messages": [{"role": "user", "content": f"copy {i}"}]} for i in range(4)]
    path = _both_fields(tmp_path, rows)
    ps = load_prompts(path, 4, seed=0)
    assert ps.request_format == "chat" and all(p.text is None and p.messages[0]["content"].startswith("copy") for p in ps.prompts)
    assert ps.notes == []  # the same as vllm bench serve: nothing to say
    raw = load_prompts(path, 4, seed=0, request_format="completions")  # asked for: raw text, and the difference said
    assert raw.request_format == "completions" and all(p.messages is None for p in raw.prompts)
    assert any("--dataset-name custom" in n and "chat template" in n for n in raw.notes)
    before = load_prompts(path, 4, seed=0, request_format=None)  # only a session recorded before the format resumes so
    assert before.request_format == "completions"


def test_messages_that_are_not_the_prompt_are_sent_and_the_difference_is_said(tmp_path):
    system = [{"role": "system", "content": "be terse"}, {"role": "user", "content": "copy"}]
    path = _both_fields(tmp_path, [{"prompt": "copy", "messages": system}, {"prompt": "again"}])
    ps = load_prompts(path, 2, seed=0)
    assert system in [p.messages for p in ps.prompts]
    assert any("1 of 2 rows have `messages` other than their `prompt`" in n for n in ps.notes)


def test_rows_with_only_messages_are_never_sent_as_raw_text(tmp_path):
    path = _both_fields(tmp_path, [{"prompt": "a"}, {"id": "chatty", "messages": [{"role": "user", "content": "b"}]}])
    with pytest.raises(InputError, match=r"'chatty' has only `messages`.*--request-format completions") as err:
        load_prompts(path, 2, request_format="completions")
    assert "--request-format chat" in err.value.hint


def test_a_text_file_is_sent_like_vllm_bench_serves_custom_jsonl_and_says_so(tmp_path):
    f = tmp_path / "lines.txt"
    f.write_text("one\ntwo\n")
    ps = load_prompts(str(f), 2)
    assert ps.chat and any("no loader for a text file" in n for n in ps.notes)


def test_sessions_recorded_before_the_format_send_the_builtin_sets_as_then():
    assert load_prompts("humaneval", 2, request_format=None).request_format == "completions"
    assert load_prompts("rename", 2, request_format=None).request_format == "chat"
    assert load_prompts("random", 2, request_format=None).request_format == "completions"


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
    assert not ps.chat and ps.prompts[0].id == "a" and ps.prompts[0].text == "Q1"  # `--dataset-name sharegpt`: raw text


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
        ps = load_prompts(str(f), 3, seed=0, request_format="completions")
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
