"""The advisor: rank speculative-decoding methods from the rule base, explain why, render valid configs."""

from specadvisor.advisor.core import advise
from specadvisor.advisor.explain import explain
from specadvisor.advisor.render import choose_tensor_parallel, container_command, serve_command, spec_config_json
from specadvisor.advisor.validate import validate_spec_config

__all__ = ["advise", "choose_tensor_parallel", "container_command", "explain", "serve_command", "spec_config_json", "validate_spec_config"]
