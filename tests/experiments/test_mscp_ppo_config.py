"""mscp_passive_data: every PPOConfig field comes from the experiment config (no dataclass
default is ever used silently), at every preset."""

import dataclasses

import pytest

from experiments.mscp.mscp_passive_data import config as mscp_config
from experiments.mscp.mscp_passive_data import train as mscp_train
from jaxlab.report import PRESETS
from jaxlab.trainers.rl import PPOConfig


@pytest.mark.parametrize("preset", PRESETS)
def test_ppo_config_takes_every_field_from_the_config(preset):
    entry = mscp_config.get_config(preset).ppo
    fields = [f.name for f in dataclasses.fields(PPOConfig)]
    assert sorted(entry.to_dict()) == sorted(fields)
    ppo = mscp_train.ppo_config(entry)
    for name in fields:
        want = entry[name]
        assert getattr(ppo, name) == (tuple(want) if name == "hidden" else want), name


def test_ppo_config_refuses_a_missing_or_unknown_field():
    entry = mscp_config.get_config("smoke").ppo
    del entry["lr"]
    with pytest.raises(ValueError, match="missing \\['lr'\\]"):
        mscp_train.ppo_config(entry)
    entry = mscp_config.get_config("smoke").ppo
    entry.learning_rate = 1e-3
    with pytest.raises(ValueError, match="unknown \\['learning_rate'\\]"):
        mscp_train.ppo_config(entry)
