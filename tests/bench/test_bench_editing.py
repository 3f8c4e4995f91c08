"""The editing workload: copy-with-a-rename prompts derived from the installed HumanEval."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

from specadvisor.bench.editing import EDIT_OUTPUT_LEN, MIN_CODE_CHARS, RENAME_OUTPUT_LEN, edit_tasks, rename, rename_tasks
from specadvisor.bench.prompts import BUILTIN_SOURCES, _humaneval_rows, default_output_len, load_prompts
from specadvisor.provenance import prompt_sha256

H200 = Path(__file__).parents[1] / "fixtures" / "h200"
FENCED = re.compile(r"```python\n(.*)```\Z", re.S)


def tasks():
    return edit_tasks(list(_humaneval_rows()))


def names(code: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.NAME]


def test_edit_is_a_builtin_chat_source_with_enough_distinct_prompts():
    assert "edit" in BUILTIN_SOURCES
    ps = load_prompts("edit", 32, seed=0)
    assert ps.chat and not ps.synthetic and ps.source == "edit" and not ps.notes  # 32 distinct: nothing repeats
    assert len({p.id for p in ps.prompts}) == 32 and all(p.id.startswith("edit-humaneval-") for p in ps.prompts)
    assert len(tasks()) >= 64


def test_the_prompts_are_deterministic_and_the_seed_only_samples():
    a, b, c = load_prompts("edit", 16, seed=1), load_prompts("edit", 16, seed=1), load_prompts("edit", 16, seed=2)
    assert [p.messages for p in a.prompts] == [p.messages for p in b.prompts]
    assert [p.id for p in a.prompts] != [p.id for p in c.prompts]
    assert tasks() == tasks()


def test_each_prompt_holds_real_code_long_enough_for_the_fixed_output():
    for task in tasks():
        content = task["prompt"]
        assert content.startswith(f"Rewrite the following function exactly, only renaming the variable {task['old']} to {task['new']}:")
        code = FENCED.search(content).group(1)
        assert code == task["code"] and len(code) >= MIN_CODE_CHARS
        ast.parse(code)  # real, parseable Python
        # at 4.3 characters per token (the most HumanEval code takes in SmolLM2's tokenizer) the copy
        # still holds the whole fixed output
        assert len(code) / 4.35 >= EDIT_OUTPUT_LEN, task["id"]


def test_the_expected_answer_differs_from_the_prompt_only_by_the_rename():
    for task in tasks():
        before, after = names(task["code"]), names(task["expected"])
        assert len(before) == len(after)
        changed = [(x, y) for x, y in zip(before, after, strict=True) if x != y]
        assert changed and set(changed) == {(task["old"], task["new"])}, task["id"]
        assert task["new"] not in before and task["old"] not in after  # a fresh name, renamed everywhere
        ast.parse(task["expected"])


def test_rename_leaves_strings_comments_and_attributes_alone():
    code = 'def f(x):\n    """x is the input"""\n    obj.x = x  # keep x here\n    return x + "x"\n'
    assert rename(code, "x", "x_k") == 'def f(x_k):\n    """x is the input"""\n    obj.x = x_k  # keep x here\n    return x_k + "x"\n'


def test_the_variable_is_the_most_used_parameter_or_local_never_a_builtin():
    row = {"task_id": "T/1", "entry_point": "g", "canonical_solution": "",
           "prompt": "def g(a, b):\n    total = 0\n    for item in a:\n        total += len(item) + b\n" + "    total = total * 2\n" * 40 + "    return total\n"}  # fmt: skip
    [task] = edit_tasks([row])
    assert (task["old"], task["new"]) == ("total", "total_value")


def test_edits_default_to_their_own_output_length():
    assert default_output_len("edit") == EDIT_OUTPUT_LEN == 128
    assert default_output_len("humaneval") == default_output_len(None) == default_output_len("/tmp/mine.jsonl") == 256


# --------------------------------------------------------------------------- the long rename set


def test_rename_is_a_builtin_chat_source_of_32_distinct_long_edits_at_320_tokens():
    assert "rename" in BUILTIN_SOURCES
    ps = load_prompts("rename", 32, seed=0)
    assert ps.chat and not ps.synthetic and ps.source == "rename" and not ps.notes
    assert len({p.id for p in ps.prompts}) == 32 and all(p.id.startswith("rename-") for p in ps.prompts)
    assert default_output_len("rename") == RENAME_OUTPUT_LEN == 320
    assert [p.messages for p in load_prompts("rename", 8, seed=3).prompts] == [p.messages for p in load_prompts("rename", 8, seed=3).prompts]


def test_rename_is_the_prompt_set_the_h200_editing_sessions_measured():
    """The sessions in tests/fixtures/h200 that decided "speculate: ngram N=4" on the editing workload
    recorded the sha256 of the 32 prompts they sampled; the built-in set, sampled the same way (32,
    seed 0), must hash the same, or those measurements are not of what ships."""
    recorded = set()
    for name in ("edit-rename-ngram-c1", "live-rename-c1", "live-rename-c1-t6", "live-1202-rename-c1"):
        bundle = json.loads((H200 / f"{name}.bundle.json").read_text())
        recorded.add(bundle["session"]["provenance"]["prompt_sha256"])
    assert recorded == {prompt_sha256(load_prompts("rename", 32, seed=0).prompts)}


def test_each_rename_task_is_parseable_code_whose_copy_outlasts_the_fixed_output():
    tasks = rename_tasks()
    assert tasks == rename_tasks() and len({t["code"] for t in tasks}) == len(tasks)
    for task in tasks:
        code = FENCED.search(task["prompt"]).group(1)
        assert code == task["code"] + "\n" and code.count("\n") >= 43
        ast.parse(code)
        # SmolLM2's tokenizer reads this code at 3.6 characters a token (398-408 prompt tokens with
        # the instruction and chat template on the H200); at 3.9 the copy still outlasts the output
        assert len(code) / 3.9 >= RENAME_OUTPUT_LEN, task["id"]


def test_a_rename_answer_differs_from_its_prompt_only_by_the_rename_and_every_role_is_renamed_somewhere():
    tasks = rename_tasks()
    for task in tasks:
        before, after = names(task["code"]), names(task["expected"])
        changed = {(x, y) for x, y in zip(before, after, strict=True) if x != y}
        assert changed == {(task["old"], task["new"])} and task["new"] not in before, task["id"]
        assert before.count(task["old"]) >= 2  # a variable the function uses (the data twice, the rest 4-8 times)
    assert len({t["old"] for t in tasks}) >= 8  # the accumulator, the data and the scale, by name
