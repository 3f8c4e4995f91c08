"""A verdict specadvisor computed from stored measurements is read back only by the decision code that
computed it (store.verdicts); results load in one validation that a smuggled row cannot widen."""

from __future__ import annotations

import pytest

from specadvisor.errors import StoreError
from specadvisor.store.verdicts import decision_code_version
from store_samples import make_session


def judged_session():
    """A session whose stored verdict the listing can tell from the data: it names N=2 at 9.99x."""
    session = make_session()
    rec = session.recommendation.model_copy(update={"arm_id": session.arms[1].id, "speedup": 9.99})
    return session.model_copy(update={"recommendation": rec})


def mark(store, session_id):
    return store.db.execute("SELECT verdict_computed_by FROM sessions WHERE id = ?", [session_id]).fetchone()[0]


def test_a_verdict_computed_here_is_read_back_by_the_same_decision_code(store):
    session = judged_session()
    store.save_session(session, verdict_computed_here=True)
    assert mark(store, session.id) == decision_code_version()
    assert store.get_session(session.id).recommendation == session.recommendation
    (summary,) = store.list_sessions()
    assert summary.best_speedup == 9.99


def test_a_verdict_computed_by_other_decision_code_is_left_for_the_views_to_compute_again(store):
    session = judged_session()
    store.save_session(session, verdict_computed_here=True)
    store.db.execute("UPDATE sessions SET verdict_computed_by = 'specadvisor 0.0.1 decision 0123456789abcdef' WHERE id = ?", [session.id])
    assert store.get_session(session.id).recommendation is None  # as a session without one: the views recompute it
    (summary,) = store.list_sessions()
    assert summary.best_speedup != 9.99 and summary.best_arm == session.arms[2].label  # the listing reads the data, as for no verdict


def test_a_sweeps_own_verdict_is_never_dropped_for_a_code_change(store):
    session = make_session()
    store.save_session(session)
    assert mark(store, session.id) is None
    assert store.get_session(session.id).recommendation == session.recommendation


def test_saving_the_session_back_keeps_the_mark_and_another_verdict_drops_it(store):
    session = make_session()
    store.save_session(session, verdict_computed_here=True)
    loaded = store.get_session(session.id)
    loaded.notes = "looked at it"
    store.save_session(loaded)  # a view saving notes: the verdict is the stored one
    assert mark(store, session.id) == decision_code_version()
    loaded.recommendation = loaded.recommendation.model_copy(update={"verdict": "do not speculate"})
    store.save_session(loaded)  # a verdict from elsewhere (a sweep): no longer computed here
    assert mark(store, session.id) is None
    store.set_recommendation(session.id, session.recommendation, computed_here=True)
    assert mark(store, session.id) == decision_code_version()


def test_a_row_smuggling_a_second_result_is_refused_in_one_line(store):
    session = make_session()
    store.save_session(session)
    first, second = store.db.execute("SELECT arm_id, result_json FROM arm_results WHERE session_id = ? ORDER BY rowid LIMIT 2", [session.id]).fetchall()
    store.db.execute("UPDATE arm_results SET result_json = ? WHERE session_id = ? AND arm_id = ?", [first[1] + "," + second[1], session.id, first[0]])
    with pytest.raises(StoreError) as caught:
        store.get_session(session.id)
    assert "cannot be read" in caught.value.message and "\n" not in caught.value.message


def test_a_row_whose_result_names_another_arm_loads_as_it_always_did(store):
    session = make_session()
    store.save_session(session)
    store.db.execute(
        "UPDATE arm_results SET result_json = replace(result_json, ?, ?) WHERE session_id = ? AND rowid = (SELECT min(rowid) FROM arm_results)",
        [f'"arm_id": "{session.results[0].arm_id}"', '"arm_id": "elsewhere"', session.id],
    )
    results = store.get_session(session.id).results
    assert [r.arm_id for r in results] == ["elsewhere", *[r.arm_id for r in session.results[1:]]]


def test_a_result_is_stored_without_its_default_fields_and_reads_back_the_same(store):
    import math

    session = make_session()
    session.results[0].output_throughput = math.nan  # kept as NaN, as every stored figure is
    store.save_session(session)
    (text,) = store.db.execute("SELECT result_json FROM arm_results WHERE arm_id = ?", [session.results[1].arm_id]).fetchone()
    assert '"error"' not in text and '"rate_points"' not in text  # None and [] are the defaults: not written
    back = store.get_session(session.id).results
    assert math.isnan(back[0].output_throughput)
    assert [r.model_dump_json() for r in back] == [r.model_dump_json() for r in session.results]
