"""Model integration: embedding models through esperanto, and local models
that run offline (``fastnotebook.app.ai.local_models``)."""
