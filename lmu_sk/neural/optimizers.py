"""Stochastic optimizers that update parameters in place, and learning-rate schedules.

An optimizer is built for a fixed list of parameter arrays; it preallocates its state
(moments, velocities) and one scratch array per parameter, and :meth:`update` then changes
the parameters in place with a fixed, small number of array operations and no temporaries.
All arithmetic goes through the array module ``xp`` (NumPy or CuPy).

On NumPy each update of a C-contiguous parameter is one fused, compiled loop over the
array (:mod:`lmu_sk.kernels.optimizers`: one read of parameter, gradient and state, one
write) instead of a sequence of array operations; the arithmetic is the same.
``fused=False`` forces the array-operation path, which is also the one used for every
other module.

Optimizers pickle without a GPU: their state is stored as NumPy arrays when pickled, and
:meth:`BaseOptimizer.to_module` moves it back to an array module before further updates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from .._device import array_module_of, for_module, to_numpy
from ..kernels import optimizers as fused_loops

__all__ = [
    "SCHEDULES",
    "SGD",
    "Adam",
    "AdaptiveLearningRate",
    "BaseOptimizer",
    "ConstantLearningRate",
    "CosineLearningRate",
    "InverseScalingLearningRate",
    "LearningRateSchedule",
    "PlateauLearningRate",
    "make_schedule",
    "optimizer_from_plain",
]

Array = Any


def _fusable(xp: ModuleType, *arrays: Array) -> bool:
    return xp is np and all(a.flags.c_contiguous for a in arrays)


def _as_list(arrays: Array | Sequence[Array]) -> list[Array]:
    if isinstance(arrays, (list, tuple)):
        return list(arrays)
    return [arrays]


def _l2_terms(l2: Sequence[tuple[int, float] | None] | None, n: int) -> list:
    if l2 is None:
        return [None] * n
    l2 = list(l2)
    if len(l2) != n:
        raise ValueError(f"l2 needs one entry per parameter array ({n}), got {len(l2)}")
    return l2


def _add_l2(xp: ModuleType, p: Array, g: Array, w: Array, term: tuple[int, float]) -> None:
    """``g.flat[:stop] += decay * p.flat[:stop]`` with ``w`` as scratch."""
    stop, decay = term
    pf, gf, wf = p.reshape(-1)[:stop], g.reshape(-1)[:stop], w.reshape(-1)[:stop]
    xp.multiply(pf, decay, out=wf)
    gf += wf


def _writable(a):
    """``a``, or a copy of it where it is read-only (CuPy's arrays always are writable)."""
    return a if getattr(getattr(a, "flags", None), "writeable", True) else a.copy()


class BaseOptimizer:
    """Common state handling of the optimizers.

    Parameters
    ----------
    params : array or sequence of arrays
        The parameters that :meth:`update` will receive; only their shapes and dtypes are
        used here, to preallocate the state.
    learning_rate_init : float
        Initial step size; the current one is :attr:`learning_rate`.
    xp : module
        Array module of the parameters.
    fused : bool or None
        Use the compiled fused loops (NumPy only); None uses them where they apply.
    """

    #: names of the attributes that hold lists of state arrays
    _state_names: tuple[str, ...] = ("_work",)

    def __init__(
        self,
        params: Array | Sequence[Array],
        learning_rate_init: float,
        xp: ModuleType = np,
        fused: bool | None = None,
    ) -> None:
        self.learning_rate_init = float(learning_rate_init)
        self.learning_rate = float(learning_rate_init)
        self.fused = fused
        self._xp = xp
        self._work = [xp.empty_like(p) for p in _as_list(params)]

    def _kernel(self, name: str) -> Callable[..., None] | None:
        """The fused loop ``name`` when it applies to this optimizer, else None."""
        if self.fused is False or self._xp is not np:
            return None
        return getattr(fused_loops, name)

    def update(
        self,
        params: Array | Sequence[Array],
        grads: Array | Sequence[Array],
        l2: Sequence[tuple[int, float] | None] | None = None,
    ) -> None:
        """Apply one step to ``params`` in place, given the gradients ``grads``.

        Parameters
        ----------
        params, grads : array or sequence of arrays
            Parameters (updated in place) and their gradients, in matching order.
        l2 : sequence of (int, float) or None, optional
            One entry per parameter array: ``(stop, decay)`` adds the L2-penalty gradient
            ``decay * p`` to the gradient of the first ``stop`` entries of ``p`` (in C
            order) before the step, or None. The fused loops do this without an extra
            pass; otherwise ``grads`` is modified in place.
        """
        raise NotImplementedError

    def state_finite(self) -> bool:
        """Whether every array of the optimizer's state (a velocity, Adam's moments) holds
        finite numbers only: a squared gradient beyond the dtype's range makes Adam's
        steps zero, and training would go on without moving."""
        for name in self._state_names:
            if name == "_work":
                continue
            for array in getattr(self, name):
                if not bool(array_module_of(array).isfinite(array).all()):
                    return False
        return True

    def to_module(self, xp: ModuleType, dtype: Any = None) -> BaseOptimizer:
        """Move the state to the array module ``xp``, in ``dtype`` where given (the
        network's: a model whose ``dtype`` changed between ``partial_fit`` calls kept its
        moments in the old one); no copy when already there and writable (a model loaded
        with ``joblib.load(..., mmap_mode='r')`` holds read-only arrays, which the compiled
        update refused)."""
        for name in self._state_names:
            # (to the host from a GPU by a copy: NumPy cannot convert a CuPy array)
            arrays = [for_module(a, xp) for a in getattr(self, name)]
            setattr(self, name, [_writable(xp.asarray(a, dtype=dtype)) for a in arrays])
        self._xp = xp
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_xp"] = None
        for name in self._state_names:
            state[name] = [to_numpy(a) for a in state[name]]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._xp = np

    def to_plain(self) -> dict[str, Any]:
        """The optimizer as plain data (builtins and NumPy arrays), as saved models hold
        it: a pickle then names no class of :mod:`lmu_sk.neural`
        (:func:`optimizer_from_plain` rebuilds it)."""
        return {"optimizer": type(self).__name__, "state": self.__getstate__()}


class SGD(BaseOptimizer):
    """Stochastic gradient descent with (Nesterov) momentum.

    The velocity ``v`` and the parameters ``p`` follow scikit-learn's ``SGDOptimizer``::

        v <- momentum * v - learning_rate * g
        p <- p + v                                       (classical momentum)
        p <- p + momentum * v - learning_rate * g        (Nesterov momentum)

    Parameters
    ----------
    params : array or sequence of arrays
        Parameters to be updated.
    learning_rate_init : float, default=0.1
        Step size.
    momentum : float, default=0.9
        Momentum in ``[0, 1]``.
    nesterov : bool, default=True
        Use Nesterov's momentum.
    xp : module, default=numpy
        Array module of the parameters.
    fused : bool or None, default=None
        See :class:`BaseOptimizer`.
    """

    _state_names = ("_work", "velocities")

    def __init__(
        self,
        params: Array | Sequence[Array],
        learning_rate_init: float = 0.1,
        momentum: float = 0.9,
        nesterov: bool = True,
        xp: ModuleType = np,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, learning_rate_init, xp, fused)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        self.velocities = [xp.zeros_like(p) for p in _as_list(params)]

    def update(
        self,
        params: Array | Sequence[Array],
        grads: Array | Sequence[Array],
        l2: Sequence[tuple[int, float] | None] | None = None,
    ) -> None:
        """Apply one momentum step to ``params`` in place (see :meth:`BaseOptimizer.update`)."""
        xp = self._xp
        lr, mu = self.learning_rate, self.momentum
        kernel = self._kernel("sgd")
        params, grads = _as_list(params), _as_list(grads)
        for p, g, v, w, term in zip(
            params, grads, self.velocities, self._work, _l2_terms(l2, len(params)), strict=True
        ):
            if kernel is not None and _fusable(xp, p, g, v):
                t = p.dtype.type
                stop, decay = term if term is not None else (0, 0.0)
                flat = [a.reshape(-1) for a in (p, g, v)]
                kernel(*flat, t(lr), t(mu), self.nesterov, stop, t(decay))
                continue
            if term is not None:
                _add_l2(xp, p, g, w, term)
            xp.multiply(g, lr, out=w)
            v *= mu
            v -= w
            if self.nesterov:
                p -= w
                xp.multiply(v, mu, out=w)
                p += w
            else:
                p += v


class Adam(BaseOptimizer):
    """Adam (Kingma & Ba, 2014) in scikit-learn's formulation.

    With ``t`` the number of steps taken, the update is::

        m <- beta_1 * m + (1 - beta_1) * g
        v <- beta_2 * v + (1 - beta_2) * g**2
        p <- p - lr_t * m / (sqrt(v) + epsilon),
        lr_t = learning_rate * sqrt(1 - beta_2**t) / (1 - beta_1**t)

    To save array passes the moments are stored scaled, ``m / (1 - beta_1)`` and
    ``v / (1 - beta_2)``, and the constants are folded into the final step; the result
    is the update above.

    Parameters
    ----------
    params : array or sequence of arrays
        Parameters to be updated.
    learning_rate_init : float, default=1e-3
        Step size.
    beta_1, beta_2 : float, default=0.9, 0.999
        Decay rates of the first and second moment estimates, in ``[0, 1)``.
    epsilon : float, default=1e-8
        Added to ``sqrt(v)`` for numerical stability.
    xp : module, default=numpy
        Array module of the parameters.
    fused : bool or None, default=None
        See :class:`BaseOptimizer`.

    Attributes
    ----------
    t : int
        Number of steps taken.
    """

    _state_names = ("_work", "_m", "_v")

    def __init__(
        self,
        params: Array | Sequence[Array],
        learning_rate_init: float = 1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        xp: ModuleType = np,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, learning_rate_init, xp, fused)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.t = 0
        self._m = [xp.zeros_like(p) for p in _as_list(params)]
        self._v = [xp.zeros_like(p) for p in _as_list(params)]

    @property
    def first_moments(self) -> list[Array]:
        """First moment estimates ``m`` (computed, not stored)."""
        return [m * (1.0 - self.beta_1) for m in self._m]

    @property
    def second_moments(self) -> list[Array]:
        """Second moment estimates ``v`` (computed, not stored)."""
        return [v * (1.0 - self.beta_2) for v in self._v]

    def update(
        self,
        params: Array | Sequence[Array],
        grads: Array | Sequence[Array],
        l2: Sequence[tuple[int, float] | None] | None = None,
    ) -> None:
        """Apply one Adam step to ``params`` in place (see :meth:`BaseOptimizer.update`)."""
        xp = self._xp
        b1, b2 = self.beta_1, self.beta_2
        self.t += 1
        lr_t = self.learning_rate * math.sqrt(1.0 - b2**self.t) / (1.0 - b1**self.t)
        # with M = m / (1 - b1) and V = v / (1 - b2):
        # lr_t * m / (sqrt(v) + eps) = c * M / (sqrt(V) + eps / sqrt(1 - b2))
        root = math.sqrt(1.0 - b2)
        c = lr_t * (1.0 - b1) / root
        eps = self.epsilon / root
        kernel = self._kernel("adam")
        params, grads = _as_list(params), _as_list(grads)
        for p, g, m, v, w, term in zip(
            params, grads, self._m, self._v, self._work, _l2_terms(l2, len(params)), strict=True
        ):
            # at least the dtype's smallest normal number: an epsilon that rounds to 0
            # there divides a zero moment by zero (NaN weights)
            eps_p = max(eps, float(np.finfo(p.dtype).tiny))
            if kernel is not None and _fusable(xp, p, g, m, v):
                # scalars in the parameters' dtype keep float32 loops in float32
                t = p.dtype.type
                stop, decay = term if term is not None else (0, 0.0)
                flat = [a.reshape(-1) for a in (p, g, m, v)]
                kernel(*flat, t(b1), t(b2), t(c), t(eps_p), stop, t(decay))
                continue
            if term is not None:
                _add_l2(xp, p, g, w, term)
            m *= b1
            m += g
            xp.multiply(g, g, out=w)
            v *= b2
            v += w
            xp.sqrt(v, out=w)
            w += eps_p
            xp.divide(m, w, out=w)
            w *= c
            p -= w


class LearningRateSchedule:
    """How the learning rate changes during training; the base class keeps it constant.

    The training loop calls :meth:`on_epoch_end` after every epoch and :meth:`on_plateau`
    when the monitored score has stalled (see :mod:`lmu_sk.neural.training`). A schedule
    changes ``optimizer.learning_rate``, which Adam and SGD both read at every step, so
    every schedule applies to both solvers (scikit-learn's MLP applies its schedules to
    'sgd' only).

    Attributes
    ----------
    fixed_length : bool
        True for a schedule planned for all ``max_iter`` epochs, which reaching
        ``max_iter`` therefore does not mark as unconverged (no ``ConvergenceWarning``).
    """

    fixed_length = False

    def on_epoch_end(self, optimizer: BaseOptimizer, t: int) -> None:
        """Update the learning rate after an epoch; ``t`` is the number of samples seen."""

    def on_plateau(self, optimizer: BaseOptimizer) -> bool:
        """React to a plateau of the monitored score; return True to stop training."""
        return True


class ConstantLearningRate(LearningRateSchedule):
    """Keep the learning rate fixed; stop training at the first plateau."""


class PlateauLearningRate(LearningRateSchedule):
    """Divide the learning rate by ``1 / factor`` at every plateau of the monitored score.

    A plateau is ``n_iter_no_change`` consecutive epochs in which the monitored score (the
    training loss, or the validation score with early stopping) did not improve by at
    least ``tol``; the training loop detects it and calls :meth:`on_plateau`. Training
    stops when the next reduction would bring the learning rate below
    ``min_learning_rate``.

    Parameters
    ----------
    factor : float, default=0.1
        Multiplier applied to the learning rate at a plateau.
    min_learning_rate : float, default=1e-6
        Smallest learning rate used.
    """

    def __init__(self, factor: float = 0.1, min_learning_rate: float = 1e-6) -> None:
        self.factor = float(factor)
        self.min_learning_rate = float(min_learning_rate)

    def on_plateau(self, optimizer: BaseOptimizer) -> bool:
        """Reduce ``optimizer.learning_rate``; return True (stop) when already minimal."""
        new_lr = optimizer.learning_rate * self.factor
        # the relative slack keeps e.g. 1e-3 * 0.1**3 (= 1.0000000000000002e-06) usable
        if new_lr < self.min_learning_rate * (1.0 - 1e-6):
            return True
        optimizer.learning_rate = new_lr
        return False


class AdaptiveLearningRate(LearningRateSchedule):
    """scikit-learn's 'adaptive' schedule: divide the learning rate by 5 at every plateau.

    As in :class:`sklearn.neural_network.MLPClassifier`, training stops at a plateau
    where the current learning rate is already at most ``min_learning_rate`` (so the
    last rate used can be just below it: 1e-3 goes 2e-4, 4e-5, 8e-6, 1.6e-6, 3.2e-7).

    Parameters
    ----------
    divisor : float, default=5.0
        The learning rate is divided by this at a plateau.
    min_learning_rate : float, default=1e-6
        Training stops at a plateau once the learning rate is at most this.
    """

    def __init__(self, divisor: float = 5.0, min_learning_rate: float = 1e-6) -> None:
        self.divisor = float(divisor)
        self.min_learning_rate = float(min_learning_rate)

    def on_plateau(self, optimizer: BaseOptimizer) -> bool:
        """Divide ``optimizer.learning_rate``; return True (stop) when already minimal."""
        if optimizer.learning_rate <= self.min_learning_rate:
            return True
        optimizer.learning_rate /= self.divisor
        return False


class InverseScalingLearningRate(LearningRateSchedule):
    """scikit-learn's 'invscaling' schedule: ``learning_rate_init / (t + 1) ** power_t``.

    ``t`` is the number of training samples seen, and, as in scikit-learn's MLP, the rate
    is updated at the end of every epoch (every ``partial_fit`` call): the first epoch runs
    at ``learning_rate_init``. A plateau stops training, as for the constant schedule.

    Parameters
    ----------
    power_t : float, default=0.5
        Exponent of the inverse scaling.
    """

    def __init__(self, power_t: float = 0.5) -> None:
        self.power_t = float(power_t)

    def on_epoch_end(self, optimizer: BaseOptimizer, t: int) -> None:
        """Set ``optimizer.learning_rate`` for ``t`` samples seen."""
        try:
            optimizer.learning_rate = optimizer.learning_rate_init / (t + 1) ** self.power_t
        except OverflowError:  # a power beyond float's range: the rate is 0 to the last bit
            optimizer.learning_rate = 0.0


class CosineLearningRate(LearningRateSchedule):
    """Cosine decay over a fixed number of epochs.

    Epoch ``k`` (1, 2, ..., ``n_epochs``) of the schedule runs at
    ``learning_rate_init * (1 + cos(pi * (k - 1) / n_epochs)) / 2``: the first at
    ``learning_rate_init``, the last at about ``(pi / n_epochs) ** 2 / 4`` of it. The
    rate is set at the end of every epoch, from the epochs this schedule has seen; after
    the last it stays at the last epoch's rate (a ``partial_fit`` after the ``fit``
    continues at it, where the formula's next value, 0, would train nothing). A
    plateau neither stops training nor changes the rate: the schedule runs its
    ``n_epochs`` (with early stopping, the weights of the best epoch are kept). With
    ``n_epochs=None`` the rate stays where it is (one ``partial_fit`` epoch at a time has
    no planned length).

    Parameters
    ----------
    n_epochs : int or None
        Length of the decay in epochs (``max_iter`` of a ``fit``).
    """

    fixed_length = True

    def __init__(self, n_epochs: int | None) -> None:
        if n_epochs is not None and int(n_epochs) < 1:
            raise ValueError(f"n_epochs must be a positive integer or None; got {n_epochs!r}.")
        self.n_epochs = None if n_epochs is None else int(n_epochs)
        self.epochs_seen = 0

    def on_epoch_end(self, optimizer: BaseOptimizer, t: int) -> None:
        """Set ``optimizer.learning_rate`` for the next epoch of the decay."""
        if self.n_epochs is None:
            return
        self.epochs_seen += 1
        # the next epoch's rate; past the last, the last epoch's
        fraction = min(self.epochs_seen, self.n_epochs - 1) / self.n_epochs
        optimizer.learning_rate = (
            optimizer.learning_rate_init * (1.0 + math.cos(math.pi * fraction)) / 2.0
        )

    def on_plateau(self, optimizer: BaseOptimizer) -> bool:
        """Keep training at the planned rate."""
        return False


SCHEDULES = {
    "constant": ConstantLearningRate,
    "plateau": PlateauLearningRate,
    "adaptive": AdaptiveLearningRate,
    "invscaling": InverseScalingLearningRate,
    "cosine": CosineLearningRate,
}


def make_schedule(
    name: str, power_t: float = 0.5, n_epochs: int | None = None
) -> LearningRateSchedule:
    """Return a new schedule object for a ``learning_rate`` parameter.

    Parameters
    ----------
    name : {'constant', 'plateau', 'adaptive', 'invscaling', 'cosine'}
        The schedule.
    power_t : float, default=0.5
        Exponent of 'invscaling' (ignored by the others).
    n_epochs : int or None, default=None
        Length of the 'cosine' decay (ignored by the others); None keeps the rate.
    """
    if name not in SCHEDULES:
        raise ValueError(f"learning_rate must be one of {sorted(SCHEDULES)}, got {name!r}.")
    if name == "invscaling":
        return InverseScalingLearningRate(power_t)
    if name == "cosine":
        return CosineLearningRate(n_epochs)
    return SCHEDULES[name]()


def optimizer_from_plain(data: dict[str, Any]) -> BaseOptimizer:
    """The optimizer of :meth:`BaseOptimizer.to_plain`'s data, on NumPy."""
    classes = {"SGD": SGD, "Adam": Adam}
    name = data.get("optimizer")
    if name not in classes:
        raise ValueError(
            f"Unknown optimizer {name!r} in the saved state; use one of {sorted(classes)}."
        )
    optimizer = classes[name].__new__(classes[name])
    optimizer.__setstate__(dict(data["state"]))
    return optimizer
