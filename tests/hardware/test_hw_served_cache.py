"""The engine probe's remembered method list: same answer as the rule base, refreshed when an input
changes, never trusted when the file holds something this module would not write."""

import json
import subprocess
import sys

from specadvisor.hardware import served_cache
from specadvisor.hardware.engine_probe import _method_support, _method_support_from_rules
from specadvisor.settings import paths


class Counting:
    def __init__(self, answer):
        self.answer, self.calls = answer, 0

    def __call__(self):
        self.calls += 1
        return self.answer


def test_a_second_ask_is_answered_from_the_file_and_equals_the_rule_base():
    first = _method_support("0.32.0", "cpu")
    assert served_cache._cache_path().is_file()
    assert _method_support("0.32.0", "cpu") == first == _method_support_from_rules("0.32.0", "cpu")
    compute = Counting((["never"], []))
    assert served_cache.served("0.32.0", "cpu", compute) == first and compute.calls == 0


def test_another_version_or_platform_is_its_own_entry():
    assert _method_support("0.8.5", "cpu") == ([], [])  # the CPU runner before 0.20 serves no speculation
    assert "eagle3" in _method_support("0.32.0", "cuda")[0]
    stored = json.loads(served_cache._cache_path().read_text())
    assert len(stored) == 2


def test_a_changed_user_rules_file_is_answered_afresh():
    compute = Counting((["ngram"], ["num_speculative_tokens"]))
    served_cache.served("0.32.0", "cuda", compute)
    served_cache.served("0.32.0", "cuda", compute)
    assert compute.calls == 1
    paths().user_rules.mkdir(parents=True)
    (paths().user_rules / "mine.toml").write_text("# a local override\n")
    served_cache.served("0.32.0", "cuda", compute)
    assert compute.calls == 2


def test_a_corrupt_or_hostile_file_is_a_miss_and_is_rewritten():
    path = served_cache._cache_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    compute = Counting((["ngram"], ["num_speculative_tokens"]))
    assert served_cache.served("0.32.0", "cuda", compute) == (["ngram"], ["num_speculative_tokens"])
    key = served_cache.cache_key("0.32.0", "cuda")
    path.write_text(json.dumps({key: {"methods": ["ngram; rm -rf ~"], "keys": []}}))
    assert served_cache.served("0.32.0", "cuda", compute) == (["ngram"], ["num_speculative_tokens"])
    assert compute.calls == 2
    assert json.loads(path.read_text())[key]["methods"] == ["ngram"]


def test_an_unwritable_cache_folder_still_answers():
    paths().cache.parent.mkdir(parents=True, exist_ok=True)
    paths().cache.write_text("a file where the folder should be")
    compute = Counting((["ngram"], []))
    assert served_cache.served("0.32.0", "cuda", compute) == (["ngram"], [])
    assert served_cache.served("0.32.0", "cuda", compute) == (["ngram"], []) and compute.calls == 2


def test_the_entries_are_bounded():
    for minor in range(served_cache.MAX_ENTRIES + 5):
        served_cache.served(f"0.{minor}.0", "cuda", Counting(([], [])))
    assert len(json.loads(served_cache._cache_path().read_text())) == served_cache.MAX_ENTRIES


def test_the_folders_are_the_ones_the_loader_reads():
    from specadvisor.rulebase.loader import _default_dirs

    paths().user_rules.mkdir(parents=True)
    assert served_cache.rules_folders() == _default_dirs(include_user=True)


def test_a_remembered_probe_does_not_import_the_rule_base():
    """The point of the cache: `detect` on a hit never loads pydantic's rule-base schemas."""
    script = (
        "import sys; from specadvisor.hardware.engine_probe import _method_support;"
        "methods = _method_support('0.32.0', 'cpu')[0];"
        "print(','.join(methods), any(m.startswith('specadvisor.rulebase') for m in sys.modules))"
    )
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert first[1] == "True" and second == [first[0], "False"]
    assert "ngram" in first[0].split(",")
