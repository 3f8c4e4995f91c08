"""Ordered schema migrations, applied on every open (sqlite-utils' built-in Migrations).

A migration, once released, is frozen: change the schema only by appending a new function. The
names recorded in `_sqlite_migrations` tell which schema a file has; a name this build does not
know means a newer specadvisor wrote the file, and the store refuses to touch it.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

MIGRATION_SET = "specadvisor"

migrations = Migrations(MIGRATION_SET)


@migrations(name="m001_create_tables")
def m001_create_tables(db: Database) -> None:
    """Schema v1: a session row with JSON for nested parts; arms, results, raw counts, samples as rows."""
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            status TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            drafter TEXT,
            workload TEXT NOT NULL,
            temperature REAL NOT NULL,
            concurrency INTEGER NOT NULL,
            hardware_fingerprint TEXT NOT NULL DEFAULT '',
            vllm_version TEXT,
            notes TEXT NOT NULL DEFAULT '',
            hardware_json TEXT NOT NULL,
            settings_json TEXT NOT NULL,
            model_profile_json TEXT,
            advice_json TEXT,
            recommendation_json TEXT,
            provenance_json TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE arms (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            arm_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            label TEXT NOT NULL,
            method TEXT,
            n INTEGER,
            concurrency INTEGER NOT NULL,
            arm_json TEXT NOT NULL,
            PRIMARY KEY (session_id, arm_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE arm_results (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            arm_id TEXT NOT NULL,
            status TEXT NOT NULL,
            output_throughput REAL,
            mean_acceptance_length REAL,
            acceptance_rate REAL,
            num_drafts INTEGER,
            num_draft_tokens INTEGER,
            num_accepted_tokens INTEGER,
            vllm_version TEXT,
            finished_at TEXT,
            result_json TEXT NOT NULL,
            PRIMARY KEY (session_id, arm_id)
        )
        """
    )
    # Raw per-position counts (accepted, drafts), not only the ratio, so that arms and sessions
    # can be pooled or re-tested later.
    db.execute(
        """
        CREATE TABLE position_counts (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            arm_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            accepted INTEGER NOT NULL,
            drafts INTEGER NOT NULL,
            rate REAL NOT NULL,
            ci_low REAL,
            ci_high REAL,
            PRIMARY KEY (session_id, arm_id, position)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE samples (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            arm_id TEXT NOT NULL,
            t REAL NOT NULL,
            sample_json TEXT NOT NULL,
            UNIQUE (session_id, arm_id, t)
        )
        """
    )


@migrations(name="m002_origin_columns_and_indexes")
def m002_origin_columns_and_indexes(db: Database) -> None:
    """Schema v2: origin and bundle hash as columns (import de-duplication), indexes for lookups."""
    db.execute("ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT 'local'")
    db.execute("ALTER TABLE sessions ADD COLUMN bundle_sha256 TEXT")
    db.execute(
        "UPDATE sessions SET origin = coalesce(json_extract(provenance_json, '$.origin'), 'local'), "
        "bundle_sha256 = json_extract(provenance_json, '$.bundle_sha256')"
    )
    db.execute("CREATE INDEX idx_sessions_created_at ON sessions(created_at)")
    db.execute("CREATE INDEX idx_sessions_model ON sessions(model)")
    db.execute("CREATE INDEX idx_sessions_hardware ON sessions(hardware_fingerprint)")
    db.execute("CREATE INDEX idx_sessions_bundle_sha256 ON sessions(bundle_sha256)")


@migrations(name="m003_arm_result_wave_placement")
def m003_arm_result_wave_placement(db: Database) -> None:
    """Schema v3: where (GPUs or cores) and in which wave an arm last ran, and how many runs it has
    (trials, bracket, confirmation), as columns; the runs themselves stay in result_json."""
    db.execute("ALTER TABLE arm_results ADD COLUMN wave INTEGER")
    db.execute("ALTER TABLE arm_results ADD COLUMN placement TEXT")
    db.execute("ALTER TABLE arm_results ADD COLUMN runs INTEGER NOT NULL DEFAULT 0")
    db.execute(
        "UPDATE arm_results SET wave = json_extract(result_json, '$.wave'), placement = json_extract(result_json, '$.placement'), "
        "runs = coalesce(json_array_length(result_json, '$.runs'), 0)"
    )


@migrations(name="m004_provenance_and_gpu_samples")
def m004_provenance_and_gpu_samples(db: Database) -> None:
    """Schema v4: GPU telemetry readings per arm as rows; sessions recorded before provenance existed
    say "unknown" for what they never recorded (not blank), and get start/end times from their arms."""
    db.execute(
        """
        CREATE TABLE gpu_samples (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            arm_id TEXT NOT NULL,
            gpu INTEGER NOT NULL,
            t REAL NOT NULL,
            sample_json TEXT NOT NULL,
            UNIQUE (session_id, arm_id, gpu, t)
        )
        """
    )
    db.execute("ALTER TABLE arm_results ADD COLUMN energy_per_output_token_j REAL")
    old = "coalesce(json_extract(provenance_json, '$.entry_point'), '') = ''"
    db.execute(
        f"""
        UPDATE sessions SET hardware_json = json_set(
            hardware_json, '$.os', 'unknown',
            '$.python', CASE WHEN coalesce(json_extract(hardware_json, '$.python'), '') = '' THEN 'unknown'
                             ELSE json_extract(hardware_json, '$.python') END,
            '$.unknown', json(CASE WHEN coalesce(json_extract(hardware_json, '$.python'), '') = ''
                                   THEN '["cpu","gpus","os","python","ram"]' ELSE '["cpu","gpus","os","ram"]' END))
        WHERE {old} AND coalesce(json_extract(hardware_json, '$.os'), '') = ''
          AND coalesce(json_extract(hardware_json, '$.hypothetical'), 0) = 0
        """
    )
    db.execute(
        f"""
        UPDATE sessions SET provenance_json = json_set(
            provenance_json, '$.entry_point', 'unknown',
            '$.started_at', (SELECT min(json_extract(r.result_json, '$.started_at')) FROM arm_results r WHERE r.session_id = sessions.id),
            '$.finished_at', CASE WHEN status = 'finished' THEN
                (SELECT max(json_extract(r.result_json, '$.finished_at')) FROM arm_results r WHERE r.session_id = sessions.id) END)
        WHERE {old}
        """
    )


@migrations(name="m005_request_records")
def m005_request_records(db: Database) -> None:
    """Schema v5: runs carry per-request records (prompt index, TTFT, latency, output tokens) inside
    result_json, so arms can be compared prompt by prompt; `request_records` counts them so that a
    query finds the sessions a paired comparison can be recomputed for (0 for older results)."""
    db.execute("ALTER TABLE arm_results ADD COLUMN request_records INTEGER NOT NULL DEFAULT 0")


@migrations(name="m006_verdict_computed_by")
def m006_verdict_computed_by(db: Database) -> None:
    """Schema v6: a verdict this specadvisor computed from stored measurements (an imported session
    without one) names the decision code that computed it (store.verdicts), so views read it instead of
    recomputing, and a build whose decision code differs recomputes. NULL: the sweep's or the bundle's."""
    db.execute("ALTER TABLE sessions ADD COLUMN verdict_computed_by TEXT")


@migrations(name="m007_trained_drafters")
def m007_trained_drafters(db: Database) -> None:
    """Schema v7: drafters specadvisor trained (`specadvisor train`), one row each: the columns a list
    needs, the whole record (curve, versions, held-out and judging sessions) as JSON."""
    db.execute(
        """
        CREATE TABLE trained_drafters (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            status TEXT NOT NULL,
            target TEXT NOT NULL DEFAULT '',
            folder TEXT NOT NULL DEFAULT '',
            drafter_json TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX trained_drafters_folder ON trained_drafters (folder)")


def known_migration_names() -> list[str]:
    """Every migration this build knows, in order (all are pending on an empty database)."""
    return [m.name for m in migrations.pending(Database(memory=True))]
