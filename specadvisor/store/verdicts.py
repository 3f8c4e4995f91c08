"""Which decision code computed a stored verdict. A verdict specadvisor computes from stored
measurements (never one a sweep decided while measuring, nor a bundle's) is stored with this mark,
and read back only by a build whose mark is the same: any change to the code that decides, a
release or an edit, makes the views compute it again rather than show an answer this code would
not give. The mark is a digest of that code's source, so nobody has to remember to bump it."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources

from specadvisor import __version__

# The modules a verdict's content comes from: the decision rule and the figures it rests on.
_DECISION_SOURCES = ("analysis", "figures.py", "stats.py", "domain.py")


@lru_cache(maxsize=1)
def decision_code_version() -> str:
    """'specadvisor VERSION decision DIGEST': the same for two builds only if the code that decides is."""
    digest = hashlib.sha256()
    root = resources.files("specadvisor")
    for name in _DECISION_SOURCES:
        node = root / name
        files = sorted((f for f in node.iterdir() if f.name.endswith(".py")), key=lambda f: f.name) if node.is_dir() else [node]
        for source in files:
            digest.update(f"{name}/{source.name}\0".encode())
            digest.update(source.read_bytes())
    return f"specadvisor {__version__} decision {digest.hexdigest()[:16]}"
