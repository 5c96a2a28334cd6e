"""The figures ``bench rules`` adds beside the rates: processor time per call, load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from okey101.bench.rules_bench import cpu_seconds


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="no /proc")
def test_processor_time_is_read_from_proc_and_grows_with_work() -> None:
    first = cpu_seconds(os.getpid())
    assert first is not None and first > 0
    later = first
    deadline = time.monotonic() + 30
    while later <= first and time.monotonic() < deadline:  # busy until the clock ticks
        sum(range(100_000))
        later = cpu_seconds(os.getpid()) or 0.0
    assert later > first
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    assert cpu_seconds(finished.pid) is None  # no such process any more


def test_the_json_line_carries_the_processor_figures() -> None:
    program = (
        "import sys; from okey101.bench import rules_bench as b; sys.exit(b.main(0.3, 2, 0, True))"
    )
    run = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["errors"] == 0
    for key in ("server_cpu_us_per_call", "empty_server_cpu_us_per_call"):
        assert figures[key] is None or figures[key] > 0
    assert {"cpu_ratio_vs_empty", "load_before", "load_after"} <= figures.keys()
