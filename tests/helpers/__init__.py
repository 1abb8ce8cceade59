"""Shared helpers of the test suites (on ``sys.path`` through pytest's
``pythonpath``): real documents, the chunk-invariant oracle, the pipeline's
small corpus."""
