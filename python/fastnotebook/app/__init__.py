"""The application around the drop-in: the embedded database, the domain
objects, the bulk ingest/embed pipeline, the HTTP API and the command line.

Served by the ``app`` extra (``pip install 'fastnotebook[app]'``); the model
layer (``fastnotebook.ai``) needs only the core install, plus the ``local``
extra for the offline default model. Importing this package imports nothing.
"""
