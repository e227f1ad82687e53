from jaxlab.report.registry import Claim, Experiment

EXPERIMENT = Experiment(name="broken_exp", paper="B. Author. Broken. ICML 2024",
                        claims=(Claim("never measured", metric="x", baseline="y"),))
