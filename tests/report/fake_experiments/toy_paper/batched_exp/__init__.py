from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="batched_exp", claims=(Claim("seeds batched in one call", metric="m", baseline="b"),)
)
