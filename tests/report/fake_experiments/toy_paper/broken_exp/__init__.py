from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="broken_exp", claims=(Claim("never measured", metric="x", baseline="y"),)
)
