"""Hand-written dense networks: activations, losses, initialisers, optimizers, training.

Everything runs on an array module ``xp`` (NumPy now, CuPy with the same code) and needs
no deep-learning framework.
"""

from .network import DenseNetwork, forward_pass, make_device_rng
from .optimizers import (
    SGD,
    Adam,
    AdaptiveLearningRate,
    ConstantLearningRate,
    CosineLearningRate,
    InverseScalingLearningRate,
    LearningRateSchedule,
    PlateauLearningRate,
    make_schedule,
)
from .training import (
    TrainingDivergedError,
    TrainingHistory,
    check_sample_weight,
    resolve_batch_size,
    train_epochs,
)

__all__ = [
    "SGD",
    "Adam",
    "AdaptiveLearningRate",
    "ConstantLearningRate",
    "CosineLearningRate",
    "DenseNetwork",
    "InverseScalingLearningRate",
    "LearningRateSchedule",
    "PlateauLearningRate",
    "TrainingDivergedError",
    "TrainingHistory",
    "check_sample_weight",
    "forward_pass",
    "make_device_rng",
    "make_schedule",
    "resolve_batch_size",
    "train_epochs",
]
