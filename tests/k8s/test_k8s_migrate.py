"""``okey101 migrate SERVICE``: what the cluster's migration Jobs (and the Deployments' init
containers, with ``--check --wait``) run, here on SQLite."""

from __future__ import annotations

import importlib.util
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from okey101.cli import main
from okey101.services import SERVICES


def _has_history(service: str) -> bool:
    if importlib.util.find_spec(f"okey101.{service}") is None:
        return False
    spec = importlib.util.find_spec(f"okey101.{service}")
    assert spec is not None and spec.submodule_search_locations is not None
    return any(
        (Path(location) / "migrations" / "env.py").exists()
        for location in spec.submodule_search_locations
    )


MIGRATED = [service for service in SERVICES if _has_history(service)]


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _revision(path: Path, service: str) -> list[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute(f"SELECT version_num FROM alembic_version_{service}").fetchall()
    return [row[0] for row in rows]


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {row[0] for row in rows}


def test_scoring_has_a_history_the_command_can_run() -> None:
    assert "scoring" in MIGRATED


@pytest.mark.parametrize("service", MIGRATED)
def test_migrate_brings_a_new_database_to_head_and_check_sees_it(
    service: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / f"{service}.db"
    url = _url(database)
    assert main(["migrate", service, "--check", "--database-url", url]) == 1
    assert "not migrated" in capsys.readouterr().err

    assert main(["migrate", service, "--database-url", url]) == 0
    out = capsys.readouterr().out
    (revision,) = _revision(database, service)
    assert f"{service}: migrated to {revision}" in out
    # The service's own tables are there besides its version table.
    assert len(_tables(database) - {f"alembic_version_{service}"}) >= 1

    assert main(["migrate", service, "--check", "--database-url", url]) == 0
    assert f"at the head revision {revision}" in capsys.readouterr().out
    # A second run is a no-op that still succeeds (a Job run again by a new rollout).
    assert main(["migrate", service, "--database-url", url]) == 0
    assert _revision(database, service) == [revision]


def test_settings_come_from_the_environment_as_for_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "from-env.db"
    monkeypatch.setenv("OKEY_LOCAL_MODE", "0")
    monkeypatch.setenv("OKEY_SCORING_DATABASE_URL", _url(database))
    assert main(["migrate", "scoring"]) == 0
    assert len(_revision(database, "scoring")) == 1


def test_local_mode_migrates_the_sqlite_file_under_the_var_dir(tmp_path: Path) -> None:
    assert main(["migrate", "scoring", "--var-dir", str(tmp_path)]) == 0
    assert len(_revision(tmp_path / "scoring.db", "scoring")) == 1


def test_check_waits_until_another_process_migrates(tmp_path: Path) -> None:
    """The init container's ``--check --wait``: it returns 0 once the Job has migrated."""
    url = _url(tmp_path / "scoring.db")
    results: list[int] = []

    def job() -> None:
        time.sleep(1.0)
        results.append(main(["migrate", "scoring", "--database-url", url]))

    thread = threading.Thread(target=job)
    began = time.monotonic()
    thread.start()
    try:
        status = main(["migrate", "scoring", "--check", "--wait", "30", "--database-url", url])
    finally:
        thread.join()
    assert results == [0]
    assert status == 0
    assert 1.0 <= time.monotonic() - began < 20


def test_check_gives_up_after_its_wait(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = _url(tmp_path / "never.db")
    began = time.monotonic()
    assert main(["migrate", "scoring", "--check", "--wait", "0.5", "--database-url", url]) == 1
    assert time.monotonic() - began >= 0.5
    assert "not migrated (at no revision" in capsys.readouterr().err


def test_an_unreachable_database_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql://nobody@127.0.0.1:1/none"
    assert main(["migrate", "scoring", "--check", "--database-url", url]) == 1
    err = capsys.readouterr().err
    assert "cannot read the database" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["migrate", "scoring", "--database-url", url]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_services_without_a_database_or_a_url_are_usage_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "rules"]) == 2
    assert "has no Alembic history" in capsys.readouterr().err
    assert main(["migrate", "nosuch"]) == 2
    assert "there is no service called 'nosuch'" in capsys.readouterr().err
    monkeypatch.delenv("OKEY_DATABASE_URL", raising=False)
    monkeypatch.delenv("OKEY_SCORING_DATABASE_URL", raising=False)
    assert main(["migrate", "scoring", "--local-mode", "0"]) == 2
    assert "scoring needs a database" in capsys.readouterr().err
    if importlib.util.find_spec("okey101.lobby") is None:
        assert main(["migrate", "lobby"]) == 2
        assert "not built yet" in capsys.readouterr().err
