"""Hand-written dense networks: activations, losses, initialisers, optimizers, training.

Everything runs on an array module ``xp`` (NumPy now, CuPy with the same code) and needs
no deep-learning framework.
"""

from .network import DenseNetwork, forward_pass, make_device_rng
from .optimizers import SGD, Adam, ConstantLearningRate, PlateauLearningRate, make_schedule
from .training import TrainingDivergedError, TrainingHistory, resolve_batch_size, train_epochs

__all__ = [
    "SGD",
    "Adam",
    "ConstantLearningRate",
    "DenseNetwork",
    "PlateauLearningRate",
    "TrainingDivergedError",
    "TrainingHistory",
    "forward_pass",
    "make_device_rng",
    "make_schedule",
    "resolve_batch_size",
    "train_epochs",
]
