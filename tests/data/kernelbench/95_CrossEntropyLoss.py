import torch
import torch.nn as nn


class Model(nn.Module):
    """Cross-entropy loss of unnormalised class scores against integer class labels, averaged
    over the batch."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """predictions is (batch_size, num_classes) logits, targets (batch_size,) class indices;
        the result is a 0-d tensor."""
        return nn.functional.cross_entropy(predictions, targets, reduction="mean")


batch_size = 16384
num_classes = 2048


def get_inputs():
    predictions = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
