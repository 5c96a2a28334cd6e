"""The table service as a process of its own (``okey101 serve table`` on a free port), beside
peers already running: the table processes' tests (``tests/table/test_table_processes.py``) and
the lobby's over two table processes (``tests/lobby/test_lobby_stack.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from okey101.stack import free_port


@contextmanager
def table_process(
    var_dir: Path, url: str, peers: tuple[Any, Any, Any], **settings: str
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    rules, bot, scoring = peers
    port = free_port()
    args = [
        sys.executable, "-m", "okey101.cli", "serve", "table",
        "--port", str(port), "--metrics-port", "0", "--var-dir", str(var_dir),
        "--database-url", url, "--rules-address", rules.target,
        "--bot-address", bot.target, "--scoring-address", scoring.target,
    ]  # fmt: skip
    env = {
        **os.environ,
        "OKEY_LOG_LEVEL": "warning",
        "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
        "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
        "OKEY_TABLE_POLL_SECONDS": "0.05",
        **settings,
    }
    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield child, f"127.0.0.1:{port}"
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
