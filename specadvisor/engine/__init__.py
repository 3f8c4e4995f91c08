"""The vLLM engine layer: launch and stop servers, diagnose failures, attach to running ones.

The CPU engine (specadvisor.engine.cpu) is imported separately: it is only needed for provisioning.
"""

from specadvisor.engine.attach import Endpoint, EndpointInfo, reset_prefix_cache, server_version
from specadvisor.engine.diagnose import Diagnosis, diagnose
from specadvisor.engine.ports import free_port
from specadvisor.engine.reaper import install_signal_handlers, stop_all_servers
from specadvisor.engine.server import ServerStartError, VllmServer
from specadvisor.engine.spec import ServerSpec, build_command

__all__ = [
    "Diagnosis",
    "Endpoint",
    "EndpointInfo",
    "ServerSpec",
    "ServerStartError",
    "VllmServer",
    "build_command",
    "diagnose",
    "free_port",
    "install_signal_handlers",
    "reset_prefix_cache",
    "server_version",
    "stop_all_servers",
]
