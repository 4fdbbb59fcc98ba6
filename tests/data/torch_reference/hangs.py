import time

import torch
import torch.nn as nn


class Model(nn.Module):
    """19_ReLU's form, whose forward never returns: the evaluator's deadline must end it."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            time.sleep(0.05)


batch_size = 2048
dim = 262144


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
