import torch

class Model(torch.nn.Module):
    def forward(self, x, scale):
        return x * scale

n = 64

def get_inputs():
    return [torch.rand(n), 2.5]

def get_init_inputs():
    return []
