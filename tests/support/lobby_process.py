"""What the fault tests that kill lobby processes share (``tests/abuse/test_faults_chips.py``,
``test_faults_player_stream.py``, ``test_faults_tournaments.py``): the five services as
processes on SQLite files or a PostgreSQL database each, and a second lobby process on the same
database (another pod), with a scenario run beside it (``with_second_lobby``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any

from okey101.stack import LocalStack, free_port, local_stack, wait_serving

SERVICES = ("rules", "bot", "scoring", "table", "lobby")


@contextlib.contextmanager
def running(
    var_dir: Path,
    databases: Mapping[str, str] | None,
    environment: Mapping[str, str],
    *,
    log_lines: int | None = None,
) -> Iterator[LocalStack]:
    """The five services as processes with ``environment`` (and each service's database from
    ``databases``, else SQLite files); their logs' ends printed if the test fails."""
    settings = dict(environment)
    for service, url in (databases or {}).items():
        settings[f"OKEY_{service.upper()}_DATABASE_URL"] = url
    with local_stack(var_dir, env=settings, services=SERVICES) as stack:
        try:
            yield stack
        except BaseException:
            print(stack.logs() if log_lines is None else stack.logs(log_lines))
            raise


class SecondLobby:
    """Another lobby process on the stack's database (a second pod), on ports of its own."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.address = f"127.0.0.1:{free_port()}"
        self.log = stack.var_dir / "logs" / "lobby-b.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        port = self.address.rsplit(":", 1)[1]
        command = [sys.executable, "-m", "okey101.cli", "serve", "lobby", "--port", port]
        command += ["--metrics-port", "0", "--jwks-port", "0", "--var-dir", str(self.stack.var_dir)]
        with open(self.log, "ab") as handle:
            self.process = subprocess.Popen(
                command, env=self.stack.env, stdout=handle, stderr=subprocess.STDOUT
            )
        return self.process

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def with_second_lobby(
    stack: LocalStack,
    two_lobbies: bool,
    scenario: Callable[[LocalStack, SecondLobby | None], Coroutine[Any, Any, None]],
    *,
    serving_timeout: float = 90,
) -> None:
    """Run ``scenario(stack, second)``, ``second`` a second lobby started first (None unless
    ``two_lobbies``) and stopped after; its log's tail is printed if the scenario fails."""
    second = SecondLobby(stack) if two_lobbies else None
    try:
        if second is not None:
            second.start()
            asyncio.run(wait_serving(second.address, timeout=serving_timeout))
        asyncio.run(scenario(stack, second))
    except BaseException:
        if second is not None:
            print("--- lobby-b ---\n" + "\n".join(second.log.read_text().splitlines()[-40:]))
        raise
    finally:
        if second is not None:
            second.stop()


__all__ = ["SERVICES", "SecondLobby", "running", "with_second_lobby"]
