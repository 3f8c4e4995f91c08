"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

Re-exported for the report and the front ends; the command line is built by
specadvisor.vllm_command, fed a session by specadvisor.trust (an imported session gets no bundle
args). An imported session's recommended config is printed only as the allow-list of
specadvisor.crossing lets it cross, for the model the user names or the placeholder MODEL
(specadvisor.trust.command_model): these lines are meant to be pasted and run.
"""

from __future__ import annotations

from typing import Any

from specadvisor import trust
from specadvisor.crossing import crossed_config
from specadvisor.domain import Recommendation, Session
from specadvisor.trust import serve_command
from specadvisor.vllm_command import spec_config_json

# serve_command: the measured server args for a local session; an imported session's are never
# reused (specadvisor.trust).
__all__ = ["recommended_command", "recommended_config", "serve_command", "spec_config_json"]


def recommended_config(session: Session, rec: Recommendation | None, *, model: str | None = None) -> dict[str, Any] | None:
    """The config to show as the one to run: a local session's own, an imported one's re-derived
    (registry method, declared numbers, this machine's drafter: the catalog's for `model`, the
    user's target, else for the model the bundle names); None when nothing can be shown."""
    if rec is None or not rec.speculative_config:
        return None
    if not trust.is_imported(session):
        return rec.speculative_config
    return crossed_config(rec.speculative_config, target_model=trust.model_arg(model or session.model))


def recommended_command(session: Session, rec: Recommendation | None, *, width: int | None = None, model: str | None = None) -> str | None:
    """trust.recommended_command, with an imported session's config through the allow-list first
    and its model the user's `model` or the placeholder MODEL."""
    if rec is None or not trust.is_imported(session) or not rec.speculative_config:
        return trust.recommended_command(session, rec, width=width, model=model)
    config = recommended_config(session, rec, model=model)
    return None if config is None else trust.serve_command(session, config, width=width, model=model)
