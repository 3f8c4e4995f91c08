"""The editing workload: copy-with-a-rename prompts derived from the installed HumanEval."""

from __future__ import annotations

import ast
import io
import re
import tokenize

from specadvisor.bench.editing import EDIT_OUTPUT_LEN, MIN_CODE_CHARS, edit_tasks, rename
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
