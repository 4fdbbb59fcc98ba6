import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the last three dimensions (features, dim1, dim2), with a learned
    elementwise weight and bias of that shape."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, features, dim1, dim2); each batch entry is normalised as a whole."""
        return self.ln(x)


batch_size = 8
features = 48
dim1 = 320
dim2 = 320


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
