"""The editing workload: copy-with-a-rename prompts derived from the installed HumanEval."""

from __future__ import annotations

import ast
import io
import re
import tokenize

from specadvisor.bench.editing import EDIT_OUTPUT_LEN, MIN_CODE_CHARS, RENAME_OUTPUT_LEN, edit_tasks, rename, rename_tasks
from specadvisor.bench.prompts import BUILTIN_SOURCES, _humaneval_rows, default_output_len, load_prompts

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


def test_rename_is_a_builtin_chat_source_of_64_distinct_long_edits_at_320_tokens():
    assert "rename" in BUILTIN_SOURCES
    ps = load_prompts("rename", 64, seed=0)
    assert ps.chat and not ps.synthetic and ps.source == "rename" and not ps.notes
    assert len({p.id for p in ps.prompts}) == 64 and all(p.id.startswith("rename-") for p in ps.prompts)
    assert default_output_len("rename") == RENAME_OUTPUT_LEN == 320
    assert [p.messages for p in load_prompts("rename", 8, seed=3).prompts] == [p.messages for p in load_prompts("rename", 8, seed=3).prompts]


def test_each_rename_task_is_parseable_code_whose_copy_outlasts_the_fixed_output():
    tasks = rename_tasks()
    assert tasks == rename_tasks() and len({t["code"] for t in tasks}) == len(tasks)
    for task in tasks:
        code = FENCED.search(task["prompt"]).group(1)
        assert code == task["code"] and code.count("\n") >= 45
        ast.parse(code)
        # 3.6 characters per token in SmolLM2's tokenizer (426-444 tokens a function); even at the
        # 4.35 of the densest HumanEval code the copy holds the whole fixed output
        assert len(code) / 4.35 >= RENAME_OUTPUT_LEN, task["id"]


def test_a_rename_answer_differs_from_its_prompt_only_by_the_rename_and_every_role_is_renamed_somewhere():
    tasks = rename_tasks()
    for task in tasks:
        before, after = names(task["code"]), names(task["expected"])
        changed = {(x, y) for x, y in zip(before, after, strict=True) if x != y}
        assert changed == {(task["old"], task["new"])} and task["new"] not in before, task["id"]
        assert before.count(task["old"]) >= 2  # a variable the function uses (the data twice, the rest 4-8 times)
    assert len({t["old"] for t in tasks}) >= 8  # the accumulator, the data, the scale and the limit, by name
