import torch
import torch.nn as nn


# A strided window: the output's spatial sizes are floors, PyTorch's
# floor((H + 2 * padding - kernel) / stride) + 1, here height // 3 and width // 3.
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 8
channels = 16
height = 1024
width = 768
kernel_size = 5
stride = 3
padding = 1


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
