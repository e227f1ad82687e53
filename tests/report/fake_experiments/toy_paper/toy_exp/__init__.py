from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="toy_exp",
    claims=(
        Claim("method beats baseline", metric="method", baseline="base", setting="toy"),
        Claim("matches the paper", metric="method", paper=1.0, tolerance=0.5),
        Claim(
            "batched runs are pooled", metric="runs", baseline="base", unit_of_replication="runs"
        ),
    ),
)
