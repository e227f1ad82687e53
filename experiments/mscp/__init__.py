"""Planning, Fast and Slow: Online RL with Action-Free Offline Data via Multiscale Planners
(Wu, Hu, Yang, Zhang, Zhang, ICML 2024)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="mscp",
    title="Planning, Fast and Slow: Online Reinforcement Learning with Action-Free Offline "
    "Data via Multiscale Planners",
    authors="Wu, Hu, Yang, Zhang, Zhang",
    code="",
    summary="state-only passive data pre-trains a fast (next-state) and a slow (goal value) "
    "planner that, with an online inverse model and pessimism, speed up online RL",
)
