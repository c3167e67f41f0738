"""Sparse times sparse: ``sptk.spgemm(A, B)`` (and ``A @ B`` between tensors), by the
library call ``sparse-run spgemm`` makes (``sptk_jit::spgemm``), without the GIL.

What it computes, in full: ``docs/OPERATIONS.md``, "SpGEMM". GraphBLAS semantics: only
stored entries take part, ``C[i, j]`` exists where some ``k`` has ``A[i, k]`` and
``B[k, j]`` stored, and a sum that cancels to zero stays stored unless
``drop_zeros=True`` (SciPy's ``A @ B`` leaves such zeros out). Both sum each entry in
increasing ``k``, so the values agree bit for bit.
"""

from . import _sptk
from ._ewise import _operand
from ._tensor import Tensor


def spgemm(a, b, semiring="plus_times", mask=None, complement=False, transpose_b=False, to=None, **options):
    """``C = A (+).(x) B`` over a semiring, a new validated :class:`Tensor`.

    ``semiring``: ``"plus_times"`` (``sum_k a_ik * b_kj``, SciPy's ``A @ B``),
    ``"plus_pair"`` (int64 counts of the ``k`` where both store), ``"min_plus"`` (one
    step of shortest paths), ``"max_times"``, ``"lor_land"`` (bool reachability, on the
    patterns). Sums run in increasing ``k``, each row on one thread: the same bits for
    every ``threads``.

    ``mask``: a sparse matrix of C's shape (a :class:`Tensor` or SciPy array; its values
    are not read): C keeps only the coordinates M stores, or with ``complement=True``
    only those it does not (GraphBLAS ``C<M>`` / ``C<!M>``), and the products outside are
    never computed. ``transpose_b=True`` computes ``A @ B.T`` without transposing B in
    memory first where B is stored by rows.

    A and B: matrices in any encodings (the planner brings them to CSR), or SciPy sparse
    arrays; their value types meet as in :func:`sptk.ewise`. Options: ``to`` (C's
    encoding, default CSR), ``pos_width`` / ``crd_width``, ``drop_zeros``, ``threads``
    (0: one per core), ``memory_limit``. Runs without the GIL.
    """
    kwargs = dict(options)
    if to is not None:
        kwargs["to"] = to
    m = None if mask is None else _operand(mask, "mask")
    return Tensor(
        _sptk.spgemm(_operand(a, "A"), _operand(b, "B"), semiring, m, bool(complement), bool(transpose_b), kwargs)
    )


def matmul(a, b, **options):
    """``A @ B`` for two sparse matrices over ``plus_times`` (see :func:`spgemm`)."""
    return spgemm(a, b, **options)
