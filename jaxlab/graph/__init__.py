"""jaxlab.graph: graph containers, GCN normalization, GDC/GADC diffusion, attacks, models.

Input convention (every public kernel): bad shapes, ranks, dtypes and out-of-range static
hyper-parameters raise ``ValueError`` naming the argument; integer features are promoted
to float32; hyper-parameters traced under ``jit`` are unchecked (see ``_checks``).
"""

from jaxlab.graph import attacks, csbm, losses, models
from jaxlab.graph.dense import row_normalize
from jaxlab.graph.diffusion import gadc, gcn_normalize, heat_diffusion, ppr_diffusion
from jaxlab.graph.graphs import from_edges, from_scipy, make_propagate, pad_edges, propagate
from jaxlab.graph.losses import masked_accuracy, masked_cross_entropy

__all__ = [
    "attacks",
    "csbm",
    "losses",
    "models",
    "gadc",
    "gcn_normalize",
    "heat_diffusion",
    "masked_accuracy",
    "masked_cross_entropy",
    "ppr_diffusion",
    "from_edges",
    "from_scipy",
    "make_propagate",
    "pad_edges",
    "propagate",
    "row_normalize",
]
