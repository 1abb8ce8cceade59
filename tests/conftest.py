"""Test-suite configuration. Shared helpers live in ``tests/helpers`` (imported
as ``helpers.*``), never in a conftest."""

# Fixtures shared by several test modules.
pytest_plugins = ["helpers.database"]
