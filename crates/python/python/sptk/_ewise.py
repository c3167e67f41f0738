"""Element-wise operations and reductions: ``sptk.add(A, B)`` and the like, by the library
call ``sparse-run add`` makes (``sptk_jit::ewise``), without the GIL.

What each computes, in full: ``docs/OPERATIONS.md``. In short: ``add``, ``sub``,
``minimum``, ``maximum`` over the union of the stored coordinates (a missing operand is 0,
as SciPy's ``A + B``, ``A - B``, ``A.minimum(B)``); ``mul``, ``div``, ``first``, ``second``
over their intersection (SciPy's ``A.multiply(B)``); results that cancel to zero stay
stored unless ``drop_zeros=True`` (SciPy drops them); ``minimum`` / ``maximum`` propagate
NaN as NumPy's do. Results have the same bits for every ``threads``.
"""

from . import _sptk
from ._errors import ArgumentError
from ._tensor import Tensor


def _operand(x, name):
    """An operand's native tensor: a :class:`Tensor`, or a SciPy sparse array (copied once
    by :func:`sptk.from_scipy`)."""
    if isinstance(x, Tensor):
        return x._t
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - SciPy is optional
        sp = None
    if sp is not None and sp.issparse(x):
        from . import from_scipy

        return from_scipy(x)._t
    raise ArgumentError("%s must be an sptk.Tensor or a SciPy sparse array, not %s" % (name, type(x).__name__))


def ewise(op, a, b, to=None, **options):
    """``C = op(A, B)`` entry by entry, a new validated :class:`Tensor`.

    ``op``: ``"add"``, ``"sub"``, ``"mul"``, ``"div"``, ``"min"``, ``"max"``, ``"first"``,
    ``"second"``. A and B: tensors of one shape (matrices or vectors) in any encodings
    (CSR, CSC, DCSR, DCSC and sparse vectors are read where they lie; others go through
    the planner first), or SciPy sparse arrays. Their value types must meet: the narrower
    is widened to the wider (f32 with f64, ...), f16 / bf16 compute in f32; an integer
    with a float raises :class:`ArgumentError`.

    Options: ``to`` (C's encoding: a preset or encoding text; default CSR, or CSC for a
    column-major A), ``pos_width`` / ``crd_width`` (bits; default the narrowest that hold
    C), ``intersect`` (``min`` / ``max`` over the intersection), ``drop_zeros``,
    ``threads`` (0: one per core), ``memory_limit`` (bytes, for conversions through the
    planner), ``align``: operands whose dimensions carry labels (relabelled ids, gene
    names) meet by label as pandas aligns frames (``"labels"``, the default: C's
    coordinates are the union of both lists, A's first, and C carries it; a dimension
    labelled on one side only raises :class:`ArgumentError`), or by position
    (``"position"``: C keeps A's labels). Runs without the GIL.
    """
    kwargs = dict(options)
    if to is not None:
        kwargs["to"] = to
    return Tensor(_sptk.ewise(op, _operand(a, "A"), _operand(b, "B"), kwargs))


def add(a, b, **options):
    """``A + B`` over the union of stored coordinates (see :func:`ewise` for options)."""
    return ewise("add", a, b, **options)


def sub(a, b, **options):
    """``A - B`` over the union: ``-b`` where only B stores (see :func:`ewise`)."""
    return ewise("sub", a, b, **options)


def mul(a, b, **options):
    """``A * B`` entry by entry over the intersection, SciPy's ``A.multiply(B)`` (see
    :func:`ewise`)."""
    return ewise("mul", a, b, **options)


def div(a, b, **options):
    """``A / B`` over the intersection (where both store). Integers: ``x / 0`` is 0 for
    ``x = 0``, the type's largest value for ``x > 0``, its smallest for ``x < 0``
    (GraphBLAS). See :func:`ewise`."""
    return ewise("div", a, b, **options)


def minimum(a, b, intersect=False, **options):
    """NumPy's ``minimum`` over the union (a missing operand is 0), or over the
    intersection with ``intersect=True``; NaN propagates (SciPy's ``A.minimum(B)`` does
    not). See :func:`ewise`."""
    return ewise("min", a, b, intersect=intersect, **options)


def maximum(a, b, intersect=False, **options):
    """NumPy's ``maximum``, as :func:`minimum`."""
    return ewise("max", a, b, intersect=intersect, **options)


def first(a, b, **options):
    """A's values where both store (a mask of A by B's pattern). See :func:`ewise`."""
    return ewise("first", a, b, **options)


def second(a, b, **options):
    """B's values where both store. See :func:`ewise`."""
    return ewise("second", a, b, **options)


subtract = sub
multiply = mul
divide = div


def dot(a, b, threads=0, align="labels"):
    """``sum(A * B)`` over the coordinates both store: a NumPy scalar of the compute type
    (SciPy's ``A.multiply(B).sum()``). The sums run in a fixed order, so the result has
    the same bits for every ``threads``. Labelled operands meet by label (``align``, as
    for :func:`ewise`). Runs without the GIL."""
    import numpy as np

    out = np.array(_sptk.dot(_operand(a, "A"), _operand(b, "B"), False, threads, align))
    return out[0]


def rowdot(a, b, threads=0, align="labels"):
    """``sum_j A[i, j] * B[i, j]`` for every row ``i``: a new 1-D array, 0 where the rows do
    not meet (SciPy's ``A.multiply(B).sum(axis=1)``); labelled operands meet by label
    (``align``, as for :func:`ewise`: the rows are then the union's). Runs without the
    GIL."""
    import numpy as np

    return np.array(_sptk.dot(_operand(a, "A"), _operand(b, "B"), True, threads, align))


_AXES = {None: "all", "all": "all", 1: "row", -1: "row", "row": "row", "rows": "row", 0: "col", -2: "col", "col": "col", "cols": "col"}


def reduce(a, op="sum", axis=None, sparse=False, threads=0):
    """The reduction ``op`` (``"sum"``, ``"min"``, ``"max"``, ``"count"``) of A's stored
    entries, as NumPy names axes: ``axis=1`` (or ``"row"``) one value per row, ``axis=0``
    (or ``"col"``) one per column, ``None`` (or ``"all"``) a NumPy scalar.

    Only stored entries count (GraphBLAS; SciPy's ``min(explicit=True)``): a row that
    stores nothing gets the operation's identity (0, +inf, -inf, 0), or with
    ``sparse=True`` is left out of the result, a sparse vector :class:`Tensor` of the rows
    that store entries. ``count`` gives int64; ``sum`` of bools and ``min`` / ``max`` of
    complex values raise :class:`ArgumentError`. Runs without the GIL.
    """
    import numpy as np

    try:
        which = _AXES[axis]
    except (KeyError, TypeError):
        raise ArgumentError("axis=%r: None, 0, 1, \"row\", \"col\" or \"all\"" % (axis,)) from None
    out = _sptk.reduce(_operand(a, "A"), op, which, sparse, threads)
    if sparse:
        return Tensor(out)
    out = np.array(out)
    return out[0] if which == "all" else out
