"""Bridge to the rule base's model and drafter catalogs (rules/models.toml, rules/drafters.toml).

Not guarded: a broken rules file (a typo in the user's own rules) is reported as the one-line
rule-base error naming its file and line, never turned into "not in the catalog".
"""

from __future__ import annotations

from specadvisor.domain import DrafterRef, ModelProfile, MtpInfo
from specadvisor.rulebase import DrafterEntry, ModelFamily, default_rulebase, drafters_for, find_model_family


def find_family(model_id: str) -> ModelFamily | None:
    return find_model_family(model_id)


def published_drafters(model_id: str) -> list[DrafterRef]:
    return [DrafterRef(drafter=e.drafter, method=e.method, parallel_drafting=e.parallel_drafting, source=e.source, date=e.date) for e in drafters_for(model_id)]


def published_drafter(drafter_id: str) -> DrafterEntry | None:
    """The catalog row for a drafter id (its target, method, block size), if listed."""
    wanted = drafter_id.strip().lower()
    return next((d for d in default_rulebase().drafters if d.drafter.lower() == wanted), None)


def profile_from_catalog(model_id: str, reasons: list[str]) -> ModelProfile | None:
    family = find_family(model_id)
    if family is None:
        return None
    layers = family.native_mtp
    mtp = MtpInfo(
        present=layers > 0,
        layers=layers,
        needs_assistant_checkpoint=family.mtp_needs_assistant,
        detail=f"from the catalog entry {family.id!r} (weights not checked)" if layers or family.mtp_needs_assistant else "",
    )
    why = "; ".join(reasons) or "no checkpoint found"
    return ModelProfile(
        id=model_id,
        source="catalog",
        family=family.id,
        params_b=family.params_b,
        active_params_b=family.active_params_b or family.params_b,
        is_moe=family.moe,
        context_length=family.context,
        mtp=mtp,
        drafters=published_drafters(model_id),
        warnings=[f"config.json not read ({why}): figures come from the catalog entry {family.id!r}"],
    )
