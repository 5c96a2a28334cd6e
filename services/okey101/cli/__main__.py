"""``python -m okey101.cli``: the ``okey101`` command, for a process started by its Python
(``sys.executable -m okey101.cli serve NAME``: the local stack, ``okey101 up``, the tests)."""

from okey101.cli import main

raise SystemExit(main())
