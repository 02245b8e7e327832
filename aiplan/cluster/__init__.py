"""Step 2: what cluster serves it (layout, network, storage, checkpoints, reliability).

Modules: :mod:`.parallel` (layout search), :mod:`.network` (collectives, fabric),
:mod:`.storage` (bandwidth, capacity, checkpoint size), :mod:`.reliability` (MTBF,
Young/Daly, goodput) and :mod:`.step` (the pipeline steps ``layout`` and ``step``).
"""

from . import network, parallel, reliability, storage
from .parallel import layout_frame
from .step import layout, step

__all__ = ["layout", "layout_frame", "network", "parallel", "reliability", "step", "storage"]
