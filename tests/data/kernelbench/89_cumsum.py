import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix sum along one dimension, chosen when the model is built: element i of
    the result is the sum of elements 0 to i of the input along that dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, *row_shape); the result has x's shape."""
        return torch.cumsum(x, dim=self.dim)


# The shape of one row, as a tuple: its element is a size of its own.
batch_size = 8192
row_shape = (24576,)
scan_dim = 1


def get_inputs():
    x = torch.rand(batch_size, *row_shape)
    return [x]


def get_init_inputs():
    return [scan_dim]
