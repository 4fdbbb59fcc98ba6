import torch
import torch.nn as nn


class Model(nn.Module):
    """Rectified linear unit: every element below zero becomes zero, the rest pass unchanged."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Returns max(x, 0) elementwise, with x's shape."""
        return torch.relu(x)


# Sizes of the benchmark: a 2048 x 262144 fp32 matrix (2 GiB).
batch_size = 2048
dim = 262144


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
