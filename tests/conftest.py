"""Test-suite configuration. Shared helpers live in ``tests/helpers`` (imported
as ``helpers.*``), never in a conftest."""
