import torch
import torch.nn as nn


class Model(nn.Module):
    """Batch normalisation of a 4-D image batch over its channels (nn.BatchNorm2d), in training
    mode: each channel is normalised by the batch's own mean and variance, then scaled and
    shifted by the learned weight and bias."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, features, dim1, dim2); the result has x's shape."""
        return self.bn(x)


batch_size = 32
features = 96
dim1 = 384
dim2 = 384


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
