"""Structure on any encoding: ``sptk.tril(A, k)``, ``triu``, ``offdiag``, ``pattern``,
``transpose`` and ``symmetrize``, by the library calls ``sparse-run tril`` and its
neighbours make, without the GIL.

Each result is in A's encoding (its levels; widths at least 32 bits, as SciPy shares them)
and keeps A's labels (swapped by ``transpose``). Padding is no entry: in BSR, ELL and n:m
a stored zero is left out. A SciPy sparse array is taken too (copied once by
:func:`sptk.from_scipy`).
"""

from . import _sptk
from ._ewise import _operand
from ._tensor import Tensor


def tril(a, k=0, memory_limit=None):
    """The lower triangle: the entries with ``j - i <= k``, as SciPy's ``tril(A, k)``
    (``k=-1`` leaves out the diagonal: the ``L`` of a triangle count)."""
    return Tensor(_sptk.structure(_operand(a, "A"), "tril", k=int(k), memory_limit=memory_limit))


def triu(a, k=0, memory_limit=None):
    """The upper triangle: the entries with ``j - i >= k``, as SciPy's ``triu(A, k)``."""
    return Tensor(_sptk.structure(_operand(a, "A"), "triu", k=int(k), memory_limit=memory_limit))


def offdiag(a, memory_limit=None):
    """A without its diagonal: a graph without self-loops."""
    return Tensor(_sptk.structure(_operand(a, "A"), "offdiag", memory_limit=memory_limit))


def pattern(a, memory_limit=None):
    """A with every stored value one (of its value type; ``True`` for booleans), after its
    duplicates are summed."""
    return Tensor(_sptk.structure(_operand(a, "A"), "pattern", memory_limit=memory_limit))


def transpose(a, memory_limit=None):
    """``A^T`` in A's encoding (a CSR stays CSR: its rows are A's columns)."""
    return Tensor(_sptk.structure(_operand(a, "A"), "transpose", memory_limit=memory_limit))


def symmetrize(a, max=False, threads=0, memory_limit=None):  # noqa: A002 - SciPy's word
    """``A + A^T`` of a square A, as SciPy's ``A + A.T``; with ``max=True``,
    ``max(A, A^T)`` (``A.maximum(A.T)``: weights kept, not doubled; NaN-propagating)."""
    return Tensor(
        _sptk.structure(_operand(a, "A"), "symmetrize", max=bool(max), threads=int(threads), memory_limit=memory_limit)
    )
