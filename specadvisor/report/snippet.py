"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

Re-exported for the report and the front ends; the command line is built by
specadvisor.vllm_command, fed a session by the recommendation (specadvisor.sweep.recommend).
"""

from __future__ import annotations

from specadvisor.sweep.recommend import serve_command
from specadvisor.vllm_command import spec_config_json

__all__ = ["serve_command", "spec_config_json"]
