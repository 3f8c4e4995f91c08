"""A report of a session over the row cap summarises it: the baselines, the fastest arms per
concurrency and the recommended arm, saying how many arms it left out (Markdown and HTML alike)."""

from __future__ import annotations

import re

from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.report import content, html, markdown


def session_of(arms_per_level: int, levels: int = 2) -> Session:
    session = Session(name="big", model="org/model", status="finished", settings=SweepSettings(concurrency=list(range(1, levels + 1))))
    for level in range(1, levels + 1):
        session.arms.append(Arm(id=f"baseline-c{level}", label=f"baseline c{level}", concurrency=level))
        session.results.append(ArmResult(arm_id=f"baseline-c{level}", completed=8, output_throughput=100.0))
        for i in range(arms_per_level - 1):
            n = 1 + i % 8
            spec = {"method": "ngram", "num_speculative_tokens": n, "prompt_lookup_max": 1 + i // 8}
            arm = Arm(id=f"ngram-{i}-c{level}", label=f"ngram {i} c{level}", method="ngram", n=n, speculative_config=spec, concurrency=level)
            session.arms.append(arm)
            if i % 3 == 0:  # a third measured; the rest never run
                session.results.append(ArmResult(arm_id=arm.id, completed=8, output_throughput=100.0 + i))
    return session


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| arm ")]


def test_a_report_over_the_row_cap_says_how_many_arms_it_left_out(monkeypatch):
    monkeypatch.setattr(content, "MAX_REPORT_ARMS", 50)
    monkeypatch.setattr(content, "TOP_ARMS_PER_CONCURRENCY", 3)
    session = session_of(40)  # 80 arms: 2 baselines, 78 n-gram arms of which 26 measured
    text = markdown(session)
    note = re.search(r"This session holds (\d+) arms; the table shows (\d+):.*?Left out: (\d+) other measured arm\(s\) and (\d+) arm\(s\) never run", text)
    assert note is not None, text
    holds, shown, measured_left, never_run = map(int, note.groups())
    assert (holds, shown, measured_left, never_run) == (80, 2 + 2 * 3, 26 - 6, 80 - 2 - 26)
    rows = _table_rows(text.split("## Results")[1].split("##")[0])
    assert len(rows) == shown
    # the fastest three at each concurrency are the ones shown (i = 36, 33, 30 measured at 136, 133, 130 tok/s)
    for level in (1, 2):
        for i in (36, 33, 30):
            assert f"| ngram {i} c{level} |" in text
        assert f"| ngram 27 c{level} |" not in text
    assert "This session holds 80 arms" in html(session)


def test_a_report_under_the_row_cap_lists_every_arm():
    session = session_of(10)
    text = markdown(session)
    assert "This session holds" not in text
    assert len(_table_rows(text.split("## Results")[1].split("##")[0])) == 20
