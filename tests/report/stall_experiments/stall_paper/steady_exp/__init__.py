from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="steady_exp", claims=(Claim("m is measured", metric="m", paper=1.0, tolerance=0.1),)
)
