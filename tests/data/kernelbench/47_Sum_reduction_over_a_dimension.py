import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum of a 3-D tensor along one dimension, chosen when the model is built; the reduced
    dimension is kept with extent 1."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, dim1, dim2); the result has extent 1 along self.dim."""
        return torch.sum(x, dim=self.dim, keepdim=True)


# dim2 is odd so the rows are not a multiple of any vector width.
batch_size = 96
dim1 = 3072
dim2 = 3071
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
