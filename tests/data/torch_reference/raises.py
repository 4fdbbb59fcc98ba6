import torch
import torch.nn as nn


class Model(nn.Module):
    """19_ReLU's form, whose forward raises: the evaluator must name this file and the error."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("this reference gives up on purpose")


batch_size = 2048
dim = 262144


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
