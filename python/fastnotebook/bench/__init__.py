"""The benchmark harness behind ``fastnotebook bench``, and the reference
implementation of Open Notebook's pipeline it (and the test suite) compares
against (``fastnotebook.bench.reference``, needs the ``reference`` extra)."""
