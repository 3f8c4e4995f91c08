"""Property: whatever (printable, secret-free) a session holds, the store and a bundle give it back unchanged."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specadvisor import bounds
from specadvisor.domain import ArmResult, MetricsSample, PositionStats
from specadvisor.store import Store
from specadvisor.store.bundle import export_bundle, read_bundle
from store_samples import make_session

_text = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Cf")), max_size=40)
# Within the figures a bundle may hold (specadvisor.bounds): 1e308 is refused at import on purpose.
_floats = st.floats(min_value=-bounds.MAX_FIGURE, max_value=bounds.MAX_FIGURE, allow_nan=False, allow_infinity=False, width=64)
_positive = st.floats(min_value=0, max_value=bounds.MAX_TOKENS_PER_S, allow_nan=False, allow_infinity=False, width=64)
_rates = st.floats(min_value=0, max_value=1, width=64)
_zones = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-12 * 60, 14 * 60))
_moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=_zones)


@st.composite
def sessions(draw):
    base = make_session()
    # Values a real sweep can produce (bundle import range-checks them: acceptance in [0, 1],
    # accepted <= drafts, throughputs >= 0); any float still exercises the round trip.
    positions = [
        PositionStats(position=i, accepted=min(a, d), drafts=d, rate=draw(_rates))
        for i, (a, d) in enumerate(draw(st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)), max_size=6)))
    ]
    result = ArmResult(
        arm_id=base.arms[1].id,
        output_throughput=draw(st.none() | _positive),
        trials=draw(st.lists(_positive, max_size=4)),
        warnings=draw(st.lists(_text, max_size=3)),
        per_position=positions,
        started_at=draw(st.none() | _moments),
    )
    samples = [
        MetricsSample(arm_id=base.arms[1].id, t=t, accepted_per_position=draw(st.lists(_floats, max_size=4)))
        for t in draw(st.lists(_floats, max_size=5, unique=True))
    ]
    return base.model_copy(
        update={
            "name": draw(_text),
            "notes": draw(_text),
            "model": draw(_text),
            "created_at": draw(_moments),
            "settings": base.settings.replace(temperature=draw(st.floats(0, 2))),
            "results": [result],
            "samples": samples,
        }
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(session=sessions())
def test_store_and_bundle_round_trip(tmp_path, session):
    path = tmp_path / f"{session.id}.db"
    with Store.open(path) as store:
        store.save_session(session)
        assert store.get_session(session.id).model_dump() == session.model_dump()
    assert read_bundle(export_bundle(session, tmp_path / f"{session.id}.json")).model_dump() == session.model_dump()
