"""The HTML report opened in a real browser (headless Chromium): every chart is laid out with a real
size and drawn marks, nothing is fetched from outside, and the page needs no script of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

PROBE = """<script>
document.body.setAttribute("data-probe", JSON.stringify([...document.querySelectorAll("svg[data-chart]")].map(s => {
  const r = s.getBoundingClientRect();
  return {kind: s.dataset.chart, width: Math.round(r.width), height: Math.round(r.height),
          marks: s.querySelectorAll("circle, rect, polyline, line").length};
})));
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        pytest.fail("headless Chromium is needed for this test: apt-get install chromium (.ci/run does)")
    return found


def rendered_charts(page: str, tmp_path: Path) -> list[dict]:
    """Load the page in headless Chromium and read back each chart's laid-out size and marks."""
    assert "<script" not in page.lower(), "the report itself carries no script"
    target = tmp_path / "report.html"
    target.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    out = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", target.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    start = out.stdout.index('data-probe="') + len('data-probe="')
    return json.loads(unescape(out.stdout[start : out.stdout.index('"', start)]))


def test_every_chart_of_the_report_renders_in_chromium(tmp_path):
    from test_report_capacity_charts import _capacity_session, _concurrency_session

    from specadvisor.report import html

    charts = rendered_charts(html(_concurrency_session()), tmp_path)
    kinds = [c["kind"] for c in charts]
    assert {"throughput", "pareto", "latency-ttft", "latency-tpot"} <= set(kinds), kinds
    for chart in charts:
        assert chart["width"] >= 500 and chart["height"] >= 250 and chart["marks"] >= 5, chart
    capacity = rendered_charts(html(_capacity_session()), tmp_path)
    goodput = next(c for c in capacity if c["kind"] == "goodput")
    assert goodput["marks"] >= 5 + 2  # five rate points, two lines, axes and the target line


def test_the_report_loads_nothing_from_outside(tmp_path):
    from test_report_capacity_charts import _concurrency_session

    from specadvisor.report import html

    page = html(_concurrency_session())
    for outside in ("src=", "<link", "@import", "url(", "<iframe", "<object"):
        assert outside not in page, outside
