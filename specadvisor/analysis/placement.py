"""Slot and arm confounded: a side-by-side comparison whose two arms each ran on one slot only.

Side by side (`--parallel`) each server has its own slot (GPUs, or a core range on a CPU host). A slot
has a speed of its own: a throttled GPU, or on a 2-core CPU box the core that also carries the client
(its baseline slowed from 32 to 50 ms per token in 4 of 8 waves while the other core's arm did not:
read as a 1.15x gain where the arms tied). The scheduler rotates the slots from wave to wave, so a
sweep with two or more waves meets every slot with every arm; a comparison that still has each arm on
a single, different slot (one wave, or a session from before the rotation) cannot tell the slot's
speed from the arm's, and the verdict says so beside its figures.
"""

from __future__ import annotations

from specadvisor.domain import ArmResult
from specadvisor.figures import MEASURED


def slots_of(result: ArmResult) -> set[str]:
    """The slots its measured runs ran on ("" = the whole host: not side by side)."""
    return {run.placement for run in result.runs if run.status in MEASURED and run.output_throughput}


def confounded_line(base: ArmResult | None, arm: ArmResult | None, arm_name: str) -> list[str]:
    """One sentence when the arm and the baseline each ran on one slot only, and not the same one."""
    if base is None or arm is None:
        return []
    base_slots, arm_slots = slots_of(base), slots_of(arm)
    if len(base_slots) != 1 or len(arm_slots) != 1 or base_slots == arm_slots or "" in base_slots | arm_slots:
        return []
    (base_slot,), (arm_slot,) = base_slots, arm_slots
    return [
        f"side by side, {arm_name} ran only on {arm_slot} and the baseline only on {base_slot}: a speed difference "
        "between those slots reads as the arm's gain or loss (another wave swaps them; sweeps rotate the slots from wave to wave)"
    ]
