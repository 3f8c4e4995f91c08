"""The editing workload: "copy this function back, renaming one variable", built from HumanEval.

Editing is where lookup drafting (n-gram, suffix) should win: almost every output token is in the
prompt. Each prompt is a HumanEval function (its prompt and canonical solution, so the code is real
and runs) with one variable to rename: the parameter or local name the function uses most, so the
answer differs from the prompt in a few places and copies it everywhere else. Nothing is random: the
same installed HumanEval gives the same prompts on every machine (the seed only samples from them).

The output length is fixed at EDIT_OUTPUT_LEN and only functions long enough that the whole answer
is still the copy are kept (MIN_CODE_CHARS: code runs 2.7-4.3 characters per token in SmolLM2's and
Llama-style tokenizers, so 600 characters hold at least 138 tokens); past the copy a model writes
something else and the workload would stop measuring editing.

HumanEval's functions are short and full of doctest examples, so a small model strays from the copy
more (AL 2.8-3.1 at N=4 on SmolLM2-135M on an H200) and the copy ends after a few hundred tokens.
`rename_tasks` is the longer case: 32 generated 43-line data-processing functions (templated,
deterministic, real Python) copied back at RENAME_OUTPUT_LEN tokens, the shape of "apply this edit
to a file" requests, worded as RENAME_INSTRUCTION. They are the prompts of the H200 editing sessions
in tests/fixtures/h200 (n-gram N=4 at AL 4.00 for SmolLM2-135M read 1.48x, 1.49x and, undecided,
1.24x across runs: README). A 50-line set with
the `edit` wording tied on the H200 instead: the model described half of those functions in prose
rather than copying them (benchmarks/README.md).
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import random
import tokenize

EDIT_OUTPUT_LEN = 128
MIN_CODE_CHARS = 600
RENAME_OUTPUT_LEN = 320
RENAME_TASKS = 32
_SUFFIXES = ("value", "input", "item", "k")  # new name = old + "_" + one of these, by task order
_NEVER_RENAME = set(dir(builtins)) | set(keyword.kwlist) | {"self", "cls", "_"}

INSTRUCTION = "Rewrite the following function exactly, only renaming the variable {old} to {new}:"


def edit_tasks(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """One task per HumanEval row long enough and with a variable to rename: id, code, old and new
    name, the prompt text, and the expected answer (the code with the rename applied)."""
    tasks: list[dict[str, str]] = []
    for row in rows:
        code = (row["prompt"] + row["canonical_solution"]).strip("\n") + "\n"
        if len(code) < MIN_CODE_CHARS:
            continue
        old = _most_used_variable(code, row["entry_point"])
        if old is None:
            continue
        new = f"{old}_{_SUFFIXES[len(tasks) % len(_SUFFIXES)]}"
        if _names(code) & {new}:
            continue  # the new name exists already: the rename would merge two variables
        task_id = "edit-" + row["task_id"].replace("/", "-").lower()
        text = INSTRUCTION.format(old=old, new=new) + f"\n\n```python\n{code}```"
        tasks.append({"id": task_id, "code": code, "old": old, "new": new, "prompt": text, "expected": rename(code, old, new)})
    return tasks


def rename_tasks() -> list[dict[str, str]]:
    """RENAME_TASKS 43-line functions, one variable each to rename, in the shape `edit_tasks` returns.
    A fixed seed and a fixed order of draws: every machine gets the same prompts, and they are the
    prompts of the H200 editing sessions in tests/fixtures/h200 (the same sha256 once sampled)."""
    rng = random.Random(7)
    tasks: list[dict[str, str]] = []
    for i in range(RENAME_TASKS):
        names = {role: rng.choice(choices) for role, choices in _ROLES.items()}  # data, acc, limit, scale, key
        func = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{i}"
        code = _TEMPLATE.format(func=func, **names)
        old, new = rng.choice([(names["acc"], names["acc"] + "_value"), (names["data"], "input_" + names["data"]), (names["scale"], names["scale"] + "_k")])
        text = RENAME_INSTRUCTION.format(old=old, new=new) + f"\n\n```python\n{code}\n```"
        tasks.append({"id": f"rename-{i}", "code": code, "old": old, "new": new, "prompt": text, "expected": rename(code, old, new)})
    return tasks


RENAME_INSTRUCTION = "Rewrite the following function exactly, only renaming variable {old} to {new}:"
_VERBS = ("process", "summarize", "aggregate", "normalize", "filter", "collect", "rank", "merge")
_NOUNS = ("orders", "metrics", "sensors", "invoices", "users", "readings", "tickets", "batches")
_ROLES = {  # drawn in this order
    "data": ("records", "items", "rows", "entries", "samples", "events", "orders", "packets"),
    "acc": ("total", "running_sum", "accumulator", "subtotal"),
    "limit": ("threshold", "limit", "cutoff", "bound"),
    "scale": ("scale", "factor", "weight", "multiplier"),
    "key": ("value", "amount", "score", "price", "level"),
}
_TEMPLATE = '''def {func}({data}, {limit}, {scale}):
    """Summarize {data} above {limit} after multiplying by {scale}."""
    {acc} = 0
    count = 0
    result = []
    seen = set()
    for item in {data}:
        value = item.get("{key}", 0) * {scale}
        if value > {limit}:
            {acc} += value
            count += 1
            result.append(item)
        elif value < -{limit}:
            {acc} -= value
            seen.add(item.get("id"))
        else:
            continue
    if count == 0:
        return {{"total": 0, "count": 0, "items": []}}
    average = {acc} / count
    spread = 0.0
    for item in result:
        delta = item.get("{key}", 0) * {scale} - average
        spread += delta * delta
    spread = (spread / count) ** 0.5
    ranked = sorted(result, key=lambda r: r.get("{key}", 0), reverse=True)
    top = ranked[:10]
    bottom = ranked[-10:]
    labels = []
    for index, item in enumerate(top):
        label = str(item.get("name", index)).strip().lower()
        if label in seen:
            label = label + "_dup"
        labels.append(label)
    summary = {{
        "total": {acc},
        "count": count,
        "average": average,
        "spread": spread,
        "top": labels,
        "bottom": [b.get("id") for b in bottom],
    }}
    return summary'''


def rename(code: str, old: str, new: str) -> str:
    """`code` with every identifier token `old` replaced by `new` (strings, comments and attribute
    names untouched), so the expected answer is exact."""
    out = []
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    for i, tok in enumerate(tokens):
        attribute = i > 0 and tokens[i - 1].type == tokenize.OP and tokens[i - 1].string == "."
        out.append(tok._replace(string=new) if tok.type == tokenize.NAME and tok.string == old and not attribute else tok)
    return tokenize.untokenize(out)


def _most_used_variable(code: str, entry_point: str) -> str | None:
    """The entry point's parameter or local variable that appears most often (first seen wins a tie)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if func is None:
        return None
    candidates = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    candidates += [n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    nested = {n.name for n in ast.walk(func) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not func}
    counts: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            counts[node.arg] = counts.get(node.arg, 0) + 1
    usable = [c for c in dict.fromkeys(candidates) if c not in _NEVER_RENAME and c not in nested and c != entry_point]
    return max(usable, key=lambda name: counts.get(name, 0), default=None)


def _names(code: str) -> set[str]:
    return {t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.NAME}
