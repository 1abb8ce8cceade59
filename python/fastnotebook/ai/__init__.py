"""Model integration: embedding models through esperanto, and local models
that run offline (``fastnotebook.ai.local_models``)."""
