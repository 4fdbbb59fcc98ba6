import torch
import torch.nn as nn


class Model(nn.Module):
    """Index of the largest element along one dimension of a 3-D tensor, chosen when the model
    is built; the reduced dimension is dropped and the result is int64."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, dim1, dim2); the result lacks dimension self.dim."""
        return torch.argmax(x, dim=self.dim)


batch_size = 96
dim1 = 2560
dim2 = 2049
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
