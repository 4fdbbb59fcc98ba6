import torch
import torch.nn as nn


class Model(nn.Module):
    """Two-dimensional max pooling over each channel of an image batch, with the window, stride,
    padding and dilation chosen when the model is built."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool2d(
            kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x is (batch_size, channels, height, width); each output element is the largest value
        under its (dilated) window."""
        return self.pool(x)


batch_size = 24
channels = 48
height = 640
width = 480
# A 3-wide window with every other element (dilation 2) spans 5; padding 1 and stride 1 leave
# height - 2 by width - 2 outputs.
kernel_size = 3
stride = 1
padding = 1
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
