"""The former home of the model layer, now ``fastnotebook.ai`` (it needs
nothing from the application). ``fastnotebook.app.ai.model_manager`` and
``fastnotebook.app.ai.local_models`` are the same module objects as
``fastnotebook.ai.model_manager`` and ``fastnotebook.ai.local_models``, so
configuring or patching either path affects both."""

from __future__ import annotations

import sys

from fastnotebook.ai import local_models as local_models
from fastnotebook.ai import model_manager as model_manager

sys.modules[f"{__name__}.local_models"] = local_models
sys.modules[f"{__name__}.model_manager"] = model_manager

__all__ = ["local_models", "model_manager"]
