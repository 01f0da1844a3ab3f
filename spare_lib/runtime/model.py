"""The model trained by the runtime: a 2-layer tanh MLP on a synthetic classification task.

Everything is a deterministic function of ``(seed, step, shard type)``, so any worker process that
hosts shard type t can compute *the same bits* for t's gradient: this is what lets SPARe's
aggregated gradient equal the failure-free one exactly (SPEC §4, last line), once the
coordinator sums the N per-type gradients in a fixed order (type 0, 1, ..., N−1).

Data: shard type t of step s is ``shard_size`` points ``x ~ N(0, I_d)`` drawn from the generator
seeded by ``(seed, 1, s, t)``; labels come from a fixed random "teacher" MLP (seeded by
``(seed, 0)``) plus Gumbel noise, so the task is learnable but noisy. No download.

This module imports only numpy: worker processes import it, and their start-up must stay cheap.

Example
-------
>>> task = MLPTask(seed=1)
>>> theta = task.init_params()
>>> loss, grad = task.shard_loss_grad(theta, step=0, shard_type=3)
>>> grad.shape == theta.shape and loss > 0
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _check_pos_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ValueError(f"{name} must be an integer in [1, inf), got {value!r}")
    return int(value)


@dataclass(frozen=True)
class MLPTask:
    """A tiny, fully deterministic data-parallel learning problem.

    Attributes
    ----------
    n_features : int
        Input dimension d.
    n_hidden : int
        Hidden units h (tanh).
    n_classes : int
        Classes K (softmax cross-entropy).
    shard_size : int
        Samples per shard type per step (the global batch of a step is N · shard_size).
    seed : int
        Root seed: fixes the teacher, the initial parameters and every shard's data.
    label_noise : float
        Scale of the Gumbel noise added to the teacher's logits (0: noiseless labels).
    n_eval : int
        Size of the fixed evaluation set (drawn from ``(seed, 2)``).
    """

    n_features: int = 8
    n_hidden: int = 16
    n_classes: int = 4
    shard_size: int = 16
    seed: int = 0
    label_noise: float = 0.5
    n_eval: int = 512

    def __post_init__(self) -> None:
        for name in ("n_features", "n_hidden", "n_classes", "shard_size", "n_eval"):
            _check_pos_int(name, getattr(self, name))
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) \
                or self.seed < 0:
            raise ValueError(f"seed must be an integer in [0, inf), got {self.seed!r}")
        if not (np.isfinite(self.label_noise) and self.label_noise >= 0):
            raise ValueError(f"label_noise must be finite and in [0, inf), got {self.label_noise!r}")

    # ---------------------------------------------------------------- parameter vector layout
    @property
    def n_params(self) -> int:
        """Length P of the flat parameter vector θ = (W1, b1, W2, b2)."""
        d, h, k = self.n_features, self.n_hidden, self.n_classes
        return d * h + h + h * k + k

    def _unpack(self, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        d, h, k = self.n_features, self.n_hidden, self.n_classes
        i = 0
        W1 = theta[i:i + d * h].reshape(d, h)
        i += d * h
        b1 = theta[i:i + h]
        i += h
        W2 = theta[i:i + h * k].reshape(h, k)
        i += h * k
        b2 = theta[i:i + k]
        return W1, b1, W2, b2

    def init_params(self) -> np.ndarray:
        """Initial θ (float64, length :attr:`n_params`), Glorot-scaled, drawn from (seed, 3)."""
        rng = np.random.default_rng([int(self.seed), 3])
        d, h, k = self.n_features, self.n_hidden, self.n_classes
        W1 = rng.normal(0.0, np.sqrt(1.0 / d), size=(d, h))
        W2 = rng.normal(0.0, np.sqrt(1.0 / h), size=(h, k))
        return np.concatenate([W1.ravel(), np.zeros(h), W2.ravel(), np.zeros(k)])

    # ------------------------------------------------------------------------------ data
    def _teacher(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([int(self.seed), 0])
        d, k = self.n_features, self.n_classes
        A = rng.normal(0.0, 1.0, size=(d, 2 * d))
        B = rng.normal(0.0, 1.0, size=(2 * d, k))
        return A, B

    def _label(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        A, B = self._teacher()
        logits = np.tanh(X @ A) @ B
        if self.label_noise > 0:
            logits = logits + self.label_noise * rng.gumbel(size=logits.shape)
        return np.argmax(logits, axis=1)

    def shard_data(self, step: int, shard_type: int) -> tuple[np.ndarray, np.ndarray]:
        """Inputs X (shard_size × d) and labels y of shard type ``shard_type`` at ``step``.

        A pure function of ``(seed, step, shard_type)``: every holder of the type generates the
        same data, without any data movement.
        """
        rng = np.random.default_rng([int(self.seed), 1, int(step), int(shard_type)])
        X = rng.normal(0.0, 1.0, size=(self.shard_size, self.n_features))
        return X, self._label(X, rng)

    def eval_data(self) -> tuple[np.ndarray, np.ndarray]:
        """The fixed evaluation set (n_eval points), drawn from (seed, 2)."""
        rng = np.random.default_rng([int(self.seed), 2])
        X = rng.normal(0.0, 1.0, size=(self.n_eval, self.n_features))
        return X, self._label(X, rng)

    # ------------------------------------------------------------------- loss and gradient
    def loss_grad(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray
                  ) -> tuple[float, np.ndarray]:
        """Mean softmax cross-entropy over (X, y) and its gradient with respect to θ."""
        W1, b1, W2, b2 = self._unpack(theta)
        n = X.shape[0]
        H = np.tanh(X @ W1 + b1)
        Z = H @ W2 + b2
        Z = Z - Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        P = E / E.sum(axis=1, keepdims=True)
        loss = float(-np.mean(np.log(P[np.arange(n), y])))
        dZ = P
        dZ[np.arange(n), y] -= 1.0
        dZ /= n
        gW2 = H.T @ dZ
        gb2 = dZ.sum(axis=0)
        dH = (dZ @ W2.T) * (1.0 - H * H)
        gW1 = X.T @ dH
        gb1 = dH.sum(axis=0)
        return loss, np.concatenate([gW1.ravel(), gb1, gW2.ravel(), gb2])

    def shard_loss_grad(self, theta: np.ndarray, step: int, shard_type: int
                        ) -> tuple[float, np.ndarray]:
        """Loss and gradient of shard type ``shard_type`` of ``step`` at parameters θ."""
        X, y = self.shard_data(step, shard_type)
        return self.loss_grad(theta, X, y)

    def microbatch_bounds(self, b: int) -> list[int]:
        """Row boundaries of the b micro-batches of a shard: micro-batch j is rows
        ``[bounds[j], bounds[j + 1])`` (sizes differ by at most one; 1 ≤ b ≤ shard_size)."""
        b = _check_pos_int("b", b)
        if b > self.shard_size:
            raise ValueError(f"b must be in [1, shard_size] = [1, {self.shard_size}], got {b}")
        return [(j * self.shard_size) // b for j in range(b + 1)]

    def microbatch_loss_grad(self, theta: np.ndarray, step: int, shard_type: int, b: int,
                             j: int) -> tuple[float, np.ndarray]:
        """Loss and gradient (means over its rows) of micro-batch j of the shard's b (issue 25).

        Any holder of ``shard_type`` computes the same bits: the micro-batch is a fixed slice of
        :meth:`shard_data`. :func:`shard_from_microbatches` turns the b results into the shard's.
        """
        bounds = self.microbatch_bounds(b)
        if not 0 <= int(j) < b:
            raise ValueError(f"j must be in [0, b-1] = [0, {b - 1}], got {j!r}")
        X, y = self.shard_data(step, shard_type)
        lo, hi = bounds[int(j)], bounds[int(j) + 1]
        return self.loss_grad(theta, X[lo:hi], y[lo:hi])

    def eval_loss(self, theta: np.ndarray) -> float:
        """Loss on the fixed evaluation set (what the notebook's loss curves show)."""
        X, y = self.eval_data()
        return self.loss_grad(theta, X, y)[0]


def aggregate(grads: dict[int, np.ndarray] | list[np.ndarray], types: list[int] | None = None
              ) -> np.ndarray:
    """Mean of per-type gradients, summed in increasing type order (the fixed summation order).

    Parameters
    ----------
    grads : dict type -> gradient, or list indexed by type
        One gradient per shard type that contributes to the step.
    types : list of int or None
        The contributing types (default: all keys / all list indices). They are sorted, then
        summed left to right, so the result depends only on *which* gradients are summed, never
        on which process computed them or in which order they arrived.

    Returns
    -------
    ndarray
        (1/|types|) · Σ_t g_t.
    """
    if types is None:
        types = list(grads.keys()) if isinstance(grads, dict) else list(range(len(grads)))
    order = sorted(int(t) for t in types)
    if not order:
        raise ValueError("types must name at least one shard type, got an empty set")
    total = np.array(grads[order[0]], dtype=np.float64, copy=True)
    for t in order[1:]:
        total += grads[t]
    return total / len(order)


def shard_from_microbatches(task: MLPTask, parts: list[tuple[float, np.ndarray]]
                            ) -> tuple[float, np.ndarray]:
    """A shard's loss and gradient from its b micro-batches' (gradient accumulation).

    Parameters
    ----------
    task : MLPTask
        Gives the micro-batch sizes n_j (:meth:`MLPTask.microbatch_bounds`).
    parts : list of (loss, gradient)
        Micro-batch j's mean loss and gradient, indexed by j = 0..b−1.

    Returns
    -------
    (float, ndarray)
        Σ_j (n_j / n) · loss_j and Σ_j (n_j / n) · g_j, summed in increasing j: the fixed order
        makes the result a function of the b micro-batch results only, never of which holders
        computed them. For b = 1 it is the shard's own result, bit for bit (1.0 · g = g).
    """
    b = len(parts)
    bounds = task.microbatch_bounds(b)
    n = float(task.shard_size)
    loss = 0.0
    grad = np.zeros_like(parts[0][1], dtype=np.float64)
    for j, (lj, gj) in enumerate(parts):
        w = (bounds[j + 1] - bounds[j]) / n
        loss += w * lj
        grad += w * gj
    return float(loss), grad


def serial_training(task: MLPTask, N: int, n_steps: int, lr: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Failure-free data-parallel training in one process: the reference of the runtime tests.

    Parameters
    ----------
    task : MLPTask
        The learning problem.
    N : int
        Shard types per step (= data-parallel groups).
    n_steps : int
        Number of SGD steps.
    lr : float
        Learning rate: θ ← θ − lr · (1/N) Σ_t g_t.

    Returns
    -------
    params : ndarray, shape (n_steps + 1, P)
        θ before step 0 and after every step.
    grads : ndarray, shape (n_steps, P)
        The aggregated gradient of every step.
    """
    N = _check_pos_int("N", N)
    n_steps = _check_pos_int("n_steps", n_steps)
    theta = task.init_params()
    params = [theta.copy()]
    grads = []
    for s in range(n_steps):
        g = aggregate([task.shard_loss_grad(theta, s, t)[1] for t in range(N)])
        theta = theta - lr * g
        params.append(theta.copy())
        grads.append(g)
    return np.array(params), np.array(grads)
