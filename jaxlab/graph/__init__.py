"""jaxlab.graph: graph containers, GCN normalisation, GDC/GADC diffusion, attacks, models."""

from jaxlab.graph import attacks, csbm, models, training
from jaxlab.graph.diffusion import gadc, gcn_normalize, heat_diffusion, ppr_diffusion
from jaxlab.graph.graphs import from_edges, from_scipy, make_propagate, pad_edges, propagate

__all__ = [
    "attacks", "csbm", "models", "training", "gadc", "gcn_normalize", "heat_diffusion",
    "ppr_diffusion", "from_edges", "from_scipy", "make_propagate", "pad_edges",
    "propagate",
]
