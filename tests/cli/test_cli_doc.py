"""Generated docs stay true: the README's CLI table and docs/schema.md match the code."""

from __future__ import annotations

from specadvisor.cli import doc
from specadvisor.cli.main import build_parser


def test_readme_cli_table_and_schema_page_are_current():
    stale = [str(p.relative_to(doc.ROOT)) for p in doc.stale()]
    assert stale == [], f"{', '.join(stale)} out of date: run `{doc.WRITE_COMMAND}`"


def test_every_command_and_option_is_in_the_table():
    table = doc.cli_table()
    parser = build_parser()
    sweep = doc._subparsers(parser).choices["sweep"]
    for action in sweep._actions:
        if action.option_strings and action.help != "==SUPPRESS==" and "-h" not in action.option_strings:
            assert f"`{action.option_strings[-1]}" in table or f"/{action.option_strings[-1]}`" in table
    for command in doc._subparsers(parser).choices:
        assert f"`specadvisor {command}" in table


def test_a_new_flag_makes_the_readme_stale(monkeypatch):
    real = doc.build_parser

    def with_extra_flag():
        parser = real()
        doc._subparsers(parser).choices["detect"].add_argument("--brand-new-flag", action="store_true")
        return parser

    monkeypatch.setattr(doc, "build_parser", with_extra_flag)
    assert doc.README in doc.stale()
    assert "`--brand-new-flag`" in doc.cli_table()


def test_schema_page_lists_every_table_and_migration():
    page = doc.docs.schema_page(doc.WRITE_COMMAND)
    for table in ("sessions", "arms", "arm_results", "position_counts", "samples"):
        assert f"## `{table}`" in page
    assert "`m001_create_tables`" in page and "- unique (session_id, arm_id, t)" in page
