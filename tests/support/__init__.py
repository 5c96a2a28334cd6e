"""Helpers the test modules share: plain functions, classes and constants, no tests and no
fixtures (fixtures are in the ``conftest.py`` of the nearest folder that holds every test using
them). Importable as ``support.<module>`` (pytest's ``pythonpath``, pyproject.toml).

A test module imports from here, never from another test module
(``tests/platform/test_test_layout.py`` checks it).
"""
