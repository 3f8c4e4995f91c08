import sys
import time

from specadvisor.hardware.commands import run_command


def test_missing_tool_is_reported_not_raised():
    result = run_command(["specadvisor-no-such-tool-xyz", "--help"], 1.0)
    assert not result.ok
    assert result.reason() == "specadvisor-no-such-tool-xyz: not installed"


def test_hanging_tool_is_cut_off_by_the_timeout():
    start = time.monotonic()
    result = run_command([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    assert time.monotonic() - start < 20  # cut off: the tool alone would take 30 s (loose: a loaded box starts Python slowly)
    assert not result.ok and "timed out after 0.5s" in result.reason()


def test_permission_denied_is_reported(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = run_command([str(script)], 1.0)
    assert not result.ok
    assert "permission denied" in result.reason()


def test_failing_tool_reason_quotes_its_last_stderr_line():
    result = run_command([sys.executable, "-c", "import sys; print('x', file=sys.stderr); print('boom', file=sys.stderr); sys.exit(3)"], 5.0)
    assert result.returncode == 3 and not result.ok
    assert result.reason() == "exit 3: boom"


def test_successful_tool_output_is_captured():
    result = run_command([sys.executable, "-c", "print('hello')"], 5.0)
    assert result.ok and result.stdout.strip() == "hello"
