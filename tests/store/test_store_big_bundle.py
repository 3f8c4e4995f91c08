"""A bundle of thousands of arms (the bulk paths: one-pass limits, batched upserts, arms loaded as one
JSON array, the listing's reduced query) carries the session unchanged, and a secret in one arm among
thousands is still caught."""

from __future__ import annotations

from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.store import Store
from specadvisor.store.bundle import export_bundle, import_bundle
from specadvisor.store.summary import summarize

LEVELS = 4


def big_session(arms: int) -> Session:
    """A baseline and n-gram arms at LEVELS concurrencies; every 7th arm and every baseline measured."""
    session = Session(name="big", model="org/model", status="finished", settings=SweepSettings(concurrency=list(range(1, LEVELS + 1))))
    for i in range(arms):
        level = 1 + i % LEVELS
        baseline = i < LEVELS
        n = None if baseline else 1 + i % 8
        spec = None if baseline else {"method": "ngram", "num_speculative_tokens": n, "prompt_lookup_max": 1 + i // 8 % 5}
        arm = Arm(id=f"arm-{i}", label=f"arm {i} c{level}", method=None if baseline else "ngram", n=n, speculative_config=spec, concurrency=level)
        session.arms.append(arm)
        if baseline or i % 7 == 0:
            session.results.append(ArmResult(arm_id=arm.id, completed=8, output_throughput=100.0 + i % 97))
    return session


def test_a_bundle_of_thousands_of_arms_round_trips_exactly(tmp_path):
    session = big_session(3_000)
    bundle = export_bundle(session, tmp_path / "big.json")
    with Store.open(tmp_path / "s.db") as store:
        imported, created = import_bundle(store, bundle)
        stored = store.get_session(session.id[:8])
        listed = store.list_sessions()
    assert created is True
    assert stored.model_dump(exclude={"provenance"}) == session.model_dump(exclude={"provenance"})
    assert [a.id for a in stored.arms] == [f"arm-{i}" for i in range(3_000)]  # order kept
    assert stored.model_dump() == imported.model_dump()
    # the listing reads only the arms a summary can pick, yet counts and picks as the whole session does
    (row,) = listed
    expected = summarize(stored)
    assert (row.arms, row.best_arm, row.best_speedup) == (3_000, expected.best_arm, expected.best_speedup)


def test_a_secret_in_one_arm_among_thousands_is_redacted_before_it_is_stored(tmp_path):
    session = big_session(2_000)
    secret = "hf_" + "a1B2" * 8
    session.arms[1_234] = session.arms[1_234].model_copy(update={"label": f"arm with {secret}"})
    session.arms[1_500] = session.arms[1_500].model_copy(update={"server_args": ["--api-key", "plain-value-123"]})
    with Store.open(tmp_path / "s.db") as store:
        store.save_session(session)
        stored = store.get_session(session.id)
    assert secret not in stored.arms[1_234].label and "<redacted>" in stored.arms[1_234].label
    assert stored.arms[1_500].server_args == ["--api-key", "<redacted>"]
    assert stored.arms[1_499] == session.arms[1_499]  # the rest untouched
