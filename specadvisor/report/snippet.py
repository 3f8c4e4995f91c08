"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

Re-exported for the report and the front ends; the command line is built by
specadvisor.vllm_command, fed a session by specadvisor.trust (an imported session gets no bundle args).
"""

from __future__ import annotations

from specadvisor.trust import recommended_command, serve_command
from specadvisor.vllm_command import spec_config_json

# serve_command: the measured server args for a local session; an imported session's are never
# reused (specadvisor.trust).
__all__ = ["recommended_command", "serve_command", "spec_config_json"]
