"""The paper trainers: whole training loops written for one paper's experiments, between the
harness and the experiments (DESIGN.md's layers: kernels ← data ← train ← trainers ←
experiments).

- ``jaxlab.trainers.curriculum``: CurBench's ``CurriculumTrainer``, its config schema and its
  methods × settings benchmark (``jaxlab.curriculum``'s hooks).
- ``jaxlab.trainers.rl``: PPO and double-DQN acting/learning loops in one program each
  (``jaxlab.rl``'s kernels).
- ``jaxlab.trainers.gadc``: GADC's node-classification runs (``jaxlab.graph``).
- ``jaxlab.trainers.byzantine``: Byzantine-robust distributed SGD runs (``jaxlab.robust``).

A trainer may import the kernel packages, ``jaxlab.data`` and ``jaxlab.train``; the harness
(``jaxlab.train``) imports no kernel package and no trainer. Import the modules themselves
(``from jaxlab.trainers import rl``): importing this package imports none of them.
"""
