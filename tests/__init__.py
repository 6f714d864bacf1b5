"""The test suite is a package, so that ``tests/service`` is imported as ``tests.service`` and never shadows the
``service`` package under test (without it, pytest put ``tests/`` first on sys.path and an editable install
supplied ``service.*`` from another checkout)."""
