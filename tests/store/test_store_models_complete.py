"""Sessions read back serialize part by part on every supported pydantic.

The domain models defer their schema builds (cheap imports for `detect`). A model validated only
inside another (an Arm in a Session read from the store or a bundle) keeps a placeholder serializer
until its own class is built; pydantic 2.13 (what vLLM 0.26 installs) then refused to serialize it on
its own, and `sessions export` failed on the lent H200 with "'MockValSer' object is not an instance of
'SchemaSerializer'". Newer pydantic builds it on the fly, so the check is on the cause: in a fresh
interpreter, once the store is imported no domain model is left with a placeholder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200" / "live-1202-rename-c1.bundle.json"

PROBE = """
import json, sys
from pydantic_core import SchemaSerializer, to_json
import specadvisor.store.store  # what every command that reads sessions imports
from specadvisor.domain import Model
from specadvisor.store.bundle import read_bundle

pending, placeholders = list(Model.__subclasses__()), []
while pending:
    cls = pending.pop()
    pending.extend(cls.__subclasses__())
    if not isinstance(cls.__dict__.get("__pydantic_serializer__"), SchemaSerializer):
        placeholders.append(cls.__name__)
from pathlib import Path
session = read_bundle(Path(sys.argv[1]))
parts = {name: len(to_json(getattr(session, name))) for name in ("settings", "arms", "results", "recommendation")}
print(json.dumps({"placeholders": sorted(placeholders), "parts": parts}))
"""


def test_no_domain_model_keeps_a_placeholder_serializer_once_the_store_is_imported():
    out = subprocess.run([sys.executable, "-c", PROBE, str(FIXTURE)], capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(out.stdout)
    assert report["placeholders"] == []
    assert all(size > 2 for size in report["parts"].values()), report  # each part serialized on its own
