"""A fully connected network with hand-written forward and backward passes.

Layout
------
All weights and biases live in one flat parameter array ``params`` (every weight matrix,
then every bias vector) and the gradients in a flat array ``grads`` of the same layout;
``coefs``, ``intercepts``, ``coef_grads`` and ``intercept_grads`` are C-contiguous views
into them. An optimizer therefore updates the whole network in one call (one fused loop
on NumPy), and the best weights of early stopping are one array copy. The L2-penalty
gradient can be left to the optimizer (``l2_gradient=False`` and :meth:`DenseNetwork.l2_terms`),
which adds it inside that loop instead of in a separate pass over the weights.

Array module
------------
Every array operation goes through the module ``xp`` given at construction (NumPy, or
CuPy with the same code): only functions that both provide are used (``matmul`` and the
ufuncs with ``out=``, ``take``, ``vdot``, ...), never NumPy functions on ``xp`` arrays.

Random numbers
--------------
Dropout masks are drawn with an RNG that lives on ``xp``: an object with NumPy's
``Generator.random(size, dtype=..., out=...)`` interface. For NumPy this is the
``numpy.random.Generator`` of the caller itself; :func:`make_device_rng` derives a
``xp.random`` generator, seeded from the host generator, for other array modules.

Workspaces
----------
The activation, gradient and dropout buffers of a batch size are allocated the first time
that batch size is seen and reused afterwards, so a training epoch allocates nothing per
minibatch apart from the few ``(batch, n_outputs)`` temporaries of the loss.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from .._device import to_numpy
from .activations import ACTIVATIONS, DERIVATIVES, HIDDEN_ACTIVATIONS
from .initializers import initialize_layer
from .losses import AVERAGED_OVER_OUTPUTS, LOSSES, OUTPUT_ACTIVATION_OF_LOSS

__all__ = ["DenseNetwork", "forward_pass", "forward_rows", "make_device_rng"]

Array = Any


def make_device_rng(xp: ModuleType, rng: np.random.Generator) -> Any:
    """Return a generator on ``xp`` for dropout masks, derived from the host ``rng``.

    For NumPy, ``rng`` itself is returned, so that results depend only on its seed. For
    another module (CuPy), ``xp.random.default_rng`` is seeded with a number drawn from
    ``rng``.
    """
    if xp is np:
        return rng
    return xp.random.default_rng(int(rng.integers(2**63 - 1)))


def _fill_uniform(rng: Any, out: Array) -> None:
    """Fill ``out`` with uniform numbers in ``[0, 1)`` from ``rng``, without a temporary."""
    try:
        rng.random(out.shape, dtype=out.dtype, out=out)
    except TypeError:  # a generator whose random() has no out= argument
        out[...] = rng.random(out.shape, dtype=out.dtype)


def forward_pass(
    X: Array,
    coefs: Sequence[Array],
    intercepts: Sequence[Array],
    activation: str,
    out_activation: str,
    xp: ModuleType = np,
    raw: bool = False,
    chunk_size: int = 256,
) -> Array:
    """Output of a network with the given weights for ``X`` (no dropout).

    The rows are processed in blocks of exactly ``chunk_size`` rows (the last block's
    unused rows hold whatever the block held before: their outputs are dropped), so every
    matrix product has the same shape whatever the number of rows. That does not make a
    row's output independent of the rows beside it: BLAS (OpenBLAS included) may sum a
    row of a product in an order set by its place in the block, by ~1e-7 relative in
    float32 (2.4e-7 seen) and ~1e-16 in float64, which is why the heads predict in
    float64.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Input on ``xp``, any real dtype (cast block by block to the weights' dtype).
    coefs, intercepts : sequences of arrays
        Weights ``(fan_in, fan_out)`` and biases ``(fan_out,)`` of every layer, on ``xp``.
    activation : str
        Hidden-layer activation.
    out_activation : str
        Output activation ('softmax', 'logistic' or 'identity').
    xp : module, default=numpy
        Array module.
    raw : bool, default=False
        Return the output pre-activation (logits) instead of the output activation.
    chunk_size : int, default=256
        Rows per block; bounds the memory of the hidden activations.

    Returns
    -------
    array of shape (n_samples, n_outputs)
        In the weights' dtype.
    """
    dtype = coefs[0].dtype
    n = X.shape[0]
    m = int(chunk_size)
    out = xp.empty((n, coefs[-1].shape[1]), dtype)
    block = xp.zeros((m, X.shape[1]), dtype)
    acts = [xp.empty((m, c.shape[1]), dtype) for c in coefs]
    for start in range(0, n, m):
        k = min(m, n - start)
        block[:k] = X[start : start + k]
        result = forward_rows(block, coefs, intercepts, activation, out_activation, acts, xp, raw)
        out[start : start + k] = result[:k]
    return out


def forward_rows(
    X: Array,
    coefs: Sequence[Array],
    intercepts: Sequence[Array],
    activation: str,
    out_activation: str,
    acts: Sequence[Array],
    xp: ModuleType = np,
    raw: bool = False,
) -> Array:
    """Output of a network for the rows ``X`` (no dropout), written into ``acts``.

    The forward computation of :func:`forward_pass`, on one block of rows and preallocated
    buffers: nothing is allocated, so a caller that predicts often on the same number of
    rows (a stream) keeps its buffers.

    Parameters
    ----------
    X : array of shape (n, n_features)
        Input in the weights' dtype, on ``xp``.
    coefs, intercepts, activation, out_activation, xp, raw
        As for :func:`forward_pass`.
    acts : sequence of arrays
        One C-contiguous ``(n, fan_out)`` array per layer, in the weights' dtype.

    Returns
    -------
    array of shape (n, n_outputs)
        ``acts[-1]``, holding the output (pre-)activation.
    """
    hidden_act = ACTIVATIONS[activation]
    inp = X
    last = len(coefs) - 1
    for i, (coef, intercept, z) in enumerate(zip(coefs, intercepts, acts, strict=True)):
        xp.matmul(inp, coef, out=z)
        z += intercept
        if i < last:
            hidden_act(z, xp)
        inp = z
    if not raw:
        ACTIVATIONS[out_activation](inp, xp)
    return inp


class _Workspace:
    """Buffers for one batch size (see the module docstring)."""

    def __init__(
        self, net: DenseNetwork, n: int, with_dropout: bool, with_input_dropout: bool
    ) -> None:
        xp, dtype, sizes = net.xp, net.dtype, net.layer_sizes
        L = net.n_layers
        # acts[i] / deltas[i]: output of layer i and gradient w.r.t. its pre-activation,
        # i = 1..L; index 0 stands for the input, which is never stored or differentiated
        self.acts: list[Array] = [None] + [xp.empty((n, s), dtype) for s in sizes[1:]]
        self.deltas: list[Array] = [None] + [xp.empty((n, s), dtype) for s in sizes[1:]]
        self.work: list[Array] = [None] + [xp.empty((n, s), dtype) for s in sizes[1:L]]
        self.ones = xp.ones(n, dtype)
        self.masks: list[Array] = [None] * L
        self.dropped: list[Array] = [None] * L
        if with_dropout:
            for i in range(1, L):
                self.masks[i] = xp.empty((n, sizes[i]), dtype)
                self.dropped[i] = xp.empty((n, sizes[i]), dtype)
        if with_input_dropout:
            self.masks[0] = xp.empty((n, sizes[0]), dtype)
            self.dropped[0] = xp.empty((n, sizes[0]), dtype)


class DenseNetwork:
    """Multilayer perceptron with a fused output loss, L2 penalty and inverted dropout
    (on the hidden units and, separately, on the input features).

    Parameters
    ----------
    layer_sizes : sequence of int
        ``(n_features, *hidden_layer_sizes, n_outputs)``; at least two entries.
    activation : {'relu', 'tanh', 'logistic', 'identity'}, default='relu'
        Activation of the hidden layers.
    loss : {'log_loss', 'binary_log_loss', 'squared_error'}, default='squared_error'
        Output loss; it fixes the output activation (softmax, logistic, identity).
    alpha : float, default=0.0
        L2 penalty. The loss of a batch of ``n`` samples includes
        ``alpha / (2 * n) * sum(W**2)`` over all weight matrices (not the biases) and the
        weight gradients include ``alpha / n * W``, as in scikit-learn's MLP; with sample
        weights ``n`` is the batch's total weight (see :meth:`loss_and_gradients`).
    dropout : float, default=0.0
        Probability of zeroing a hidden unit during training (inverted dropout: the kept
        units are scaled by ``1 / (1 - dropout)``, so prediction needs no rescaling).
    input_dropout : float, default=0.0
        Probability of zeroing an input feature during training (inverted, as ``dropout``).
    dtype : dtype, default=numpy.float32
        Floating dtype of parameters and computations.
    xp : module, default=numpy
        Array module (NumPy or CuPy).

    Attributes
    ----------
    params, grads : arrays of shape (n_params,)
        Flat parameters and gradients.
    coefs, intercepts, coef_grads, intercept_grads : lists of arrays
        Per-layer views into ``params`` and ``grads``.
    out_activation : str
        Output activation implied by ``loss``.
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        activation: str = "relu",
        loss: str = "squared_error",
        alpha: float = 0.0,
        dropout: float = 0.0,
        dtype: Any = np.float32,
        xp: ModuleType = np,
        input_dropout: float = 0.0,
    ) -> None:
        layer_sizes = tuple(int(s) for s in layer_sizes)
        if len(layer_sizes) < 2 or min(layer_sizes) < 1:
            raise ValueError(f"layer_sizes must hold at least two positive ints: {layer_sizes}")
        if activation not in HIDDEN_ACTIVATIONS:
            raise ValueError(f"activation must be one of {HIDDEN_ACTIVATIONS}: {activation!r}")
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}: {loss!r}")
        for name, rate in (("dropout", dropout), ("input_dropout", input_dropout)):
            if not 0.0 <= rate < 1.0:
                raise ValueError(f"{name} must be in [0, 1): {rate!r}")
        self.layer_sizes = layer_sizes
        self.n_layers = len(layer_sizes) - 1
        self.activation = activation
        self.loss = loss
        self.out_activation = OUTPUT_ACTIVATION_OF_LOSS[loss]
        self.alpha = float(alpha)
        self.dropout = float(dropout)
        self.input_dropout = float(input_dropout)
        self.dtype = np.dtype(dtype)
        self.xp = xp

        shapes = list(itertools.pairwise(layer_sizes))
        self.n_weights = sum(a * b for a, b in shapes)
        self.n_params = self.n_weights + sum(layer_sizes[1:])
        self.params = xp.zeros(self.n_params, self.dtype)
        self.grads = xp.zeros(self.n_params, self.dtype)
        self.coefs, self.intercepts = self._views(self.params, shapes)
        self.coef_grads, self.intercept_grads = self._views(self.grads, shapes)
        self._weight_work = xp.empty(self.n_weights, self.dtype) if self.alpha else None
        self._workspaces: dict[tuple[int, bool, bool], _Workspace] = {}

        self._hidden = ACTIVATIONS[activation]
        self._hidden_derivative = DERIVATIVES[activation]
        self._loss = LOSSES[loss]

    def _views(self, flat: Array, shapes: list[tuple[int, int]]) -> tuple[list, list]:
        coefs, intercepts = [], []
        offset = 0
        for fan_in, fan_out in shapes:
            coefs.append(flat[offset : offset + fan_in * fan_out].reshape(fan_in, fan_out))
            offset += fan_in * fan_out
        for _, fan_out in shapes:
            intercepts.append(flat[offset : offset + fan_out])
            offset += fan_out
        return coefs, intercepts

    # ------------------------------------------------------------------ parameters
    def initialize(self, rng: np.random.Generator | np.random.RandomState) -> DenseNetwork:
        """Draw fresh weights (He for ReLU layers, Glorot otherwise) and zero biases."""
        for i in range(self.n_layers):
            act = self.activation if i < self.n_layers - 1 else self.out_activation
            coef, intercept = initialize_layer(
                rng, self.layer_sizes[i], self.layer_sizes[i + 1], act, self.dtype, self.xp
            )
            self.coefs[i][...] = coef
            self.intercepts[i][...] = intercept
        return self

    def set_weights(self, coefs: Sequence[Array], intercepts: Sequence[Array]) -> DenseNetwork:
        """Copy per-layer weights and biases (NumPy or ``xp`` arrays) into the network."""
        xp = self.xp
        for dst, src in zip(self.coefs + self.intercepts, [*coefs, *intercepts], strict=True):
            if tuple(src.shape) != tuple(dst.shape):
                raise ValueError(f"weight shape {src.shape} does not match {dst.shape}")
            dst[...] = xp.asarray(src, dtype=self.dtype)
        return self

    def get_weights(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Return copies of the weights and biases as NumPy arrays."""
        coefs = [np.array(to_numpy(c), copy=True) for c in self.coefs]
        intercepts = [np.array(to_numpy(b), copy=True) for b in self.intercepts]
        return coefs, intercepts

    def _workspace(self, n: int, with_dropout: bool, with_input_dropout: bool) -> _Workspace:
        key = (n, with_dropout, with_input_dropout)
        ws = self._workspaces.get(key)
        if ws is None:
            ws = self._workspaces[key] = _Workspace(self, n, with_dropout, with_input_dropout)
        return ws

    # ------------------------------------------------------------------ prediction
    def forward(self, X: Array, raw: bool = False, chunk_size: int = 256) -> Array:
        """Network output for ``X`` without dropout; see :func:`forward_pass`."""
        return forward_pass(
            X,
            self.coefs,
            self.intercepts,
            self.activation,
            self.out_activation,
            self.xp,
            raw=raw,
            chunk_size=chunk_size,
        )

    # ------------------------------------------------------------------ training
    def loss_and_gradients(
        self,
        X: Array,
        Y: Array,
        dropout_rng: Any = None,
        dropout_masks: Sequence[Array] | None = None,
        l2_gradient: bool = True,
        input_mask: Array | None = None,
        sample_weight: Array | None = None,
        weight_sum: float | None = None,
        reported: bool = False,
    ) -> Array:
        """Forward and backward pass of one batch; the gradients land in :attr:`grads`.

        Parameters
        ----------
        X : array of shape (n, n_features)
            Inputs in the network's dtype.
        Y : array of shape (n, n_outputs)
            Targets (one-hot or 0/1 columns for the classification losses).
        dropout_rng : generator, optional
            Source of dropout masks (see :func:`make_device_rng`). Without it and without
            ``dropout_masks``, no dropout is applied.
        dropout_masks : sequence of arrays, optional
            Fixed multipliers for the hidden layers, ``dropout_masks[i]`` of shape
            ``(n, hidden_layer_sizes[i])`` (typically 0 or ``1 / (1 - dropout)``); used
            instead of drawing masks, e.g. to check gradients.
        input_mask : array of shape (n, n_features), optional
            Fixed multipliers for the inputs, used instead of drawing an input-dropout
            mask.
        l2_gradient : bool, default=True
            Add the L2-penalty gradient ``alpha / n * W`` to the weight gradients. With
            False it is left to the optimizer (see :meth:`l2_terms`), which folds it into
            its update without an extra pass over the weights. The returned loss always
            includes the penalty.
        sample_weight : array of shape (n,), optional
            Non-negative weights of the samples, on ``xp`` in the network's dtype. As in
            scikit-learn's MLP the loss becomes the weighted mean over the samples, and the
            L2 penalty is divided by the total weight ``W`` instead of ``n``:
            ``alpha / (2 * W) * sum(W**2)``, gradient ``alpha / W * W``.
        weight_sum : float, optional
            ``W``, the sum of ``sample_weight``, when the caller knows it (saves a device
            synchronisation); must be positive.
        reported : bool, default=False
            Return the loss as scikit-learn's MLP reports it (what ``loss_curve_`` holds and
            ``tol`` compares): the squared error averaged over the outputs, not summed (see
            :data:`~lmu_sk.neural.losses.AVERAGED_OVER_OUTPUTS`); the gradients are the
            same, those of the summed loss, as MLP's.

        Returns
        -------
        loss : 0-d array
            Mean (weighted mean) loss of the batch including the L2 penalty.
        """
        xp = self.xp
        L = self.n_layers
        n = X.shape[0]
        if sample_weight is not None:
            if weight_sum is None:
                weight_sum = float(sample_weight.sum())
            if not weight_sum > 0:
                raise ValueError(
                    f"The sample weights of a batch must sum to > 0; got {weight_sum}."
                )
        use_dropout = dropout_masks is not None or (dropout_rng is not None and self.dropout > 0)
        use_input_dropout = input_mask is not None or (
            dropout_rng is not None and self.input_dropout > 0
        )
        ws = self._workspace(n, use_dropout, use_input_dropout)
        acts, deltas, coefs = ws.acts, ws.deltas, self.coefs
        keep = 1.0 - self.dropout
        if use_input_dropout:
            if input_mask is None:
                input_mask = ws.masks[0]
                _fill_uniform(dropout_rng, input_mask)
                xp.greater_equal(input_mask, self.input_dropout, out=input_mask)
                input_mask *= 1.0 / (1.0 - self.input_dropout)
            X = xp.multiply(X, input_mask, out=ws.dropped[0])

        # forward; `inputs[i]` is what layer i + 1 reads
        inputs = [X] + [None] * (L - 1)
        masks = [None] * L
        for i in range(1, L + 1):
            z = acts[i]
            xp.matmul(inputs[i - 1], coefs[i - 1], out=z)
            z += self.intercepts[i - 1]
            if i < L:
                self._hidden(z, xp)
                if use_dropout:
                    if dropout_masks is not None:
                        mask = dropout_masks[i - 1]
                    else:
                        mask = ws.masks[i]
                        _fill_uniform(dropout_rng, mask)
                        xp.greater_equal(mask, self.dropout, out=mask)
                        mask *= 1.0 / keep
                    masks[i] = mask
                    xp.multiply(z, mask, out=ws.dropped[i])
                    inputs[i] = ws.dropped[i]
                else:
                    inputs[i] = z
        loss, _ = self._loss(
            acts[L], Y, xp, out=deltas[L], sample_weight=sample_weight, weight_sum=weight_sum
        )
        if reported and self.loss in AVERAGED_OVER_OUTPUTS:
            loss = loss / Y.shape[1]

        # backward; the gradient w.r.t. X itself is never formed
        for i in range(L, 0, -1):
            xp.matmul(inputs[i - 1].T, deltas[i], out=self.coef_grads[i - 1])
            xp.matmul(ws.ones, deltas[i], out=self.intercept_grads[i - 1])
            if i > 1:
                d = deltas[i - 1]
                xp.matmul(deltas[i], coefs[i - 1].T, out=d)
                if use_dropout:
                    d *= masks[i - 1]
                self._hidden_derivative(acts[i - 1], d, xp, ws.work[i - 1])

        if self.alpha:
            scale = n if sample_weight is None else weight_sum
            w = self.params[: self.n_weights]
            loss = loss + (0.5 * self.alpha / scale) * xp.vdot(w, w)
            if l2_gradient:
                xp.multiply(w, self.alpha / scale, out=self._weight_work)
                self.grads[: self.n_weights] += self._weight_work
        return loss

    def l2_terms(self, n: float) -> list[tuple[int, float] | None]:
        """The L2 term for ``optimizer.update(..., l2=...)`` of a batch of ``n`` samples.

        The weights are the first :attr:`n_weights` entries of :attr:`params`, and their
        penalty gradient is ``alpha / n`` times themselves. With sample weights ``n`` is
        the batch's total weight (see :meth:`loss_and_gradients`).
        """
        return [(self.n_weights, self.alpha / n) if self.alpha else None]
