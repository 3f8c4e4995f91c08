"""The shell's own variables are not secrets, whatever their names end in."""

from __future__ import annotations


def test_the_shells_working_directory_is_not_a_secret() -> None:
    from specadvisor.redact import forget_secrets, redact_text, remember_environment

    forget_secrets()
    try:
        remember_environment({"PWD": "/work/project", "OLDPWD": "/home/me", "DB_PWD": "hunter2-long"})
        assert redact_text("/work/project/rules/evidence.toml from /home/me") == "/work/project/rules/evidence.toml from /home/me"
        assert "hunter2-long" not in redact_text("password was hunter2-long")
    finally:
        forget_secrets()
