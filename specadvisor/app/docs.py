"""The generated documents' content, read from the code that decides it: the database schema after
every migration (docs/schema.md) and the sweep settings' plain table (`app/setting_table.py`).
`python -m specadvisor.cli.doc --write` writes them; a test fails while one is stale."""

from __future__ import annotations


def setting_table() -> str:
    """`app/setting_table.py` as the declarations on `domain.SweepSettings` make it."""
    from specadvisor import setting_specs

    return setting_specs.setting_table()


def schema_page(write_command: str) -> str:
    """Tables, columns, keys and indexes after every migration, and what each migration did."""
    from sqlite_utils import Database

    from specadvisor.store.migrations import migrations

    db = Database(memory=True)
    migrations.apply(db)
    lines = [
        "# Database schema",
        "",
        f"Generated from `specadvisor/store/migrations.py` by `{write_command}`; do not edit by hand.",
        "A migration, once released, is frozen: the schema changes only by appending one.",
        "",
        "## Migrations",
        "",
    ]
    for migration in migrations.pending(Database(memory=True)):
        doc = " ".join((migration.fn.__doc__ or "").split())
        lines.append(f"- `{migration.name}`: {doc}")
    for table in sorted(db.tables, key=lambda t: t.name):
        if table.name.startswith("_"):
            continue
        lines += ["", f"## `{table.name}`", "", "| column | type | not null | default | key |", "|---|---|---|---|---|"]
        pks = set(table.pks) if table.use_rowid is False else set()
        fks = {fk.column: f"{fk.other_table}.{fk.other_column}" for fk in table.foreign_keys}
        for col in db.execute(f"PRAGMA table_info({table.name})").fetchall():
            _, name, ctype, notnull, default, _pk = col
            key = " ".join(k for k in ("primary" if name in pks else "", f"-> {fks[name]}" if name in fks else "") if k)
            lines.append(f"| `{name}` | {ctype or '-'} | {'yes' if notnull else ''} | {default if default is not None else ''} | {key} |")
        indexes = []
        for index in sorted(table.indexes, key=lambda i: i.name):
            if index.name.startswith("sqlite_autoindex"):  # from a PRIMARY KEY or UNIQUE clause
                if set(index.columns) != pks:
                    indexes.append(f"- unique ({', '.join(index.columns)})")
            else:
                indexes.append(f"- index `{index.name}` on ({', '.join(index.columns)})" + (", unique" if index.unique else ""))
        if indexes:
            lines += ["", *indexes]
    return "\n".join(lines) + "\n"
