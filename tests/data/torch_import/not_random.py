import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1

n = 64

def get_inputs():
    return [torch.arange(n, dtype=torch.float32)]

def get_init_inputs():
    return []
