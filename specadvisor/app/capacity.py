"""Use case "capacity instead": the planned session measured for goodput under a latency target
(per configuration one launch and a Poisson rate sweep to the latency edge), as `sweep --goodput
--slo-tpot-ms T --slo-ttft-ms F` asks it. The TUI's Capacity prompt asks here; the targets are
checked against their declarations like the flags (a p99 TPOT of 1e12 ms is refused, not stored)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specadvisor.errors import InputError
from specadvisor.quantities import parse_number

if TYPE_CHECKING:
    from specadvisor.domain import Session

EXAMPLE = "e.g. 30 (p99 TPOT ms) or 30, 500 (and p99 TTFT ms)"


def read_targets(text: str) -> tuple[float, float | None]:
    """`30` or `30, 500` (or `30 ms; 500 ms`): the p99 TPOT target and, when given, the p99 TTFT one, in ms."""
    parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
    if not 1 <= len(parts) <= 2:
        raise InputError(f"cannot read {text!r} as a latency target", hint=EXAMPLE)
    tpot = parse_number(parts[0].lower().replace("ms", ""), "p99 TPOT target (ms)", minimum=0.001)
    ttft = parse_number(parts[1].lower().replace("ms", ""), "p99 TTFT target (ms)", minimum=0.001) if len(parts) > 1 else None
    return tpot, ttft


def for_capacity(session: Session, text: str) -> Session:
    """The session with its settings asking for capacity under the targets in `text`; InputError
    (and the session unchanged) when the text does not read or a target is outside its bound."""
    tpot, ttft = read_targets(text)
    session.settings = session.settings.replace(goodput=True, slo_tpot_ms=tpot, slo_ttft_ms=ttft)
    return session
