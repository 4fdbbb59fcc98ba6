import torch
import torch.nn as nn


class Model(nn.Module):
    """Product of two square N x N matrices, C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """A and B are (N, N); so is the result."""
        return torch.matmul(A, B)


N = 3072


def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]


def get_init_inputs():
    return []
