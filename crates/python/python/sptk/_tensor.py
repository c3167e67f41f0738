"""The :class:`Tensor` class: a sparse tensor in any encoding, its arrays shared with NumPy.

Arrays are read-only NumPy views of the tensor's own memory (for an opened ``.spt``
file, of the file's map): no copy. Each array keeps the memory alive on its own, so it
stays valid after the Tensor is dropped (``arr.base`` holds it).
"""

import numpy as np

from . import _sptk
from ._dtypes import numpy_dtype, values_out
from ._errors import ArgumentError

# Index dtypes SciPy takes: the signed type of each width it allows.
_INT32_MAX = 2**31 - 1


def _array(handle):
    return None if handle is None else np.asarray(handle)


class Tensor:
    """A sparse tensor in one encoding (``encoding`` is its canonical text).

    Made by :func:`sptk.read`, :func:`sptk.open`, :func:`sptk.from_scipy`,
    :func:`sptk.from_numpy`, :func:`sptk.from_arrow` and :meth:`convert`.
    """

    __slots__ = ("_t", "notes", "__weakref__")

    def __init__(self, t, notes=()):
        self._t = t
        self.notes = list(notes)

    # -- description (no array is touched) ------------------------------------------
    @property
    def shape(self):
        """Dimension sizes."""
        return tuple(self._t.shape)

    @property
    def ndim(self):
        return len(self._t.shape)

    @property
    def nnz(self):
        """Stored values, explicit zeros and block padding included (``len(values)``)."""
        return self._t.nnz

    @property
    def encoding(self):
        """The encoding's canonical text."""
        return self._t.encoding_text

    @property
    def value_type(self):
        """sptk's value type name: ``f64``, ``f32``, ``f16``, ``bf16``, ``i64``, ...,
        ``bool``, ``complex64``, ``complex128``."""
        return self._t.value_type

    @property
    def dtype(self):
        """The NumPy dtype of ``values`` (bf16: ml_dtypes' ``bfloat16``)."""
        return numpy_dtype(self._t.value_type, _NUMPY_NAMES)

    @property
    def path(self):
        """The ``.spt`` file this tensor was opened from, or None."""
        return self._t.path

    def info(self):
        """A dict describing the tensor: shape, level shape, encoding, levels, value type,
        stored values, file, whether validated. Reads no array."""
        return {
            "shape": self.shape,
            "level_shape": tuple(self._t.level_shape),
            "encoding": self.encoding,
            "levels": [{"format": f, "expr": e} for f, e in self._t.levels()],
            "value_type": self.value_type,
            "nnz": self.nnz,
            "path": self.path,
            "validated": self._t.validated,
        }

    def __repr__(self):
        return "<sptk.Tensor %s %s nnz=%d encoding=%r>" % (
            "x".join(map(str, self.shape)),
            self.value_type,
            self.nnz,
            self.encoding,
        )

    def __matmul__(self, other):
        """``A @ B``: :func:`sptk.spgemm` (plus_times) for a sparse B (a Tensor or a SciPy
        sparse array), :func:`sptk.spmv` / :func:`sptk.spmm` for a dense 1-D / 2-D
        NumPy array."""
        import numpy as np

        if isinstance(other, np.ndarray):
            from . import spmm, spmv

            if other.ndim == 1:
                return spmv(self, other)
            if other.ndim == 2:
                return spmm(self, other)
            return NotImplemented
        if not isinstance(other, Tensor):
            try:
                import scipy.sparse as sp
            except ImportError:  # pragma: no cover - SciPy is optional
                return NotImplemented
            if not sp.issparse(other):
                return NotImplemented
        from . import spgemm

        return spgemm(self, other)

    # -- arrays (zero-copy) -------------------------------------------------------
    def validate(self):
        """Validates an opened file now (every chunk checksum and invariant, O(size)),
        once; a no-op for tensors built in memory. Raises FormatError on damage."""
        self._t.validate()
        return self

    def pos(self, level):
        """``pos[level]`` as a read-only NumPy array at its stored width (unsigned), or
        None for a level without positions. Validates an opened file first."""
        return _array(self._t.pos(level))

    def crd(self, level):
        """``crd[level]``, as :meth:`pos` (2-bit n:m offsets are unpacked, one byte
        each: the only array that is a copy)."""
        return _array(self._t.crd(level))

    @property
    def values(self):
        """The values, read-only, in storage order (bf16 as ml_dtypes' ``bfloat16``; its
        bits: ``values.view(np.uint16)``)."""
        return values_out(np.asarray(self._t.values()), self.value_type)

    def labels(self, dim):
        """The labels of dimension ``dim`` (cell barcodes, gene names, node ids) as a list
        of str, or None."""
        return self._t.labels(dim)

    def rows(self, start, stop):
        """Outer coordinates ``start..stop`` (rows of CSR, block rows of BSR, columns of
        CSC) as a :class:`Rows` view: ``pos``, ``crd``, ``values`` without a copy. On an
        opened file only those rows are checked (their chunks' checksums, positions and
        coordinates); nothing else is validated."""
        pos, crd, values, block = self._t.rows(start, stop)
        values = values_out(np.asarray(values), self.value_type)
        return Rows(self, start, stop, np.asarray(pos), np.asarray(crd), values, block)

    # -- conversion and output --------------------------------------------------
    def convert(self, to=None, **options):
        """This tensor in another encoding (options as for :func:`sptk.read`: ``dtype``,
        ``pos_width``, ``crd_width``, ``memory_limit``, ``prune``, ``drop_zeros``,
        ``keep_duplicates``, ``slice_values``). Runs without the GIL."""
        options["to"] = to
        return Tensor(self._t.convert(options))

    def write(self, path, format=None, compress=None, var=None, memory_limit=None):
        """Writes atomically (temporary beside the target, fsync, rename) in the format
        the name says (``.spt``, ``.mtx[.gz]``, ``.tns``, ``.npz``, ``.npy``,
        ``.safetensors``, ``.h5``, ``.h5ad``, ``.mat``, ``.parquet``, ``.arrow``,
        ``.arrows``, ``.levels``) or ``format`` does. ``compress``: ``none``,
        ``gzip[:LEVEL]``, ``zstd`` or ``lz4`` where the format takes it. ``var``: the
        MATLAB variable or safetensors tensor name. Returns the writer's notes."""
        import os

        return self._t.write(os.fspath(path), format, compress, var, memory_limit)

    def to_scipy(self, copy=False):
        """A SciPy ``csr_array``, ``csc_array``, ``coo_array`` or ``bsr_array``.

        ``copy=False`` shares the index and value arrays where SciPy can take them as
        they are (unsigned 32-bit indices viewed as ``int32`` when every value is below
        2**31; 64-bit as ``int64``), else converts the indices once. Shared arrays are
        read-only: SciPy's in-place methods (``sort_indices``, ``sum_duplicates``,
        ``data *= 2``) raise ``ValueError``; ``copy=True`` gives writable arrays.
        Other encodings: ``convert(to="CSR")`` first.
        """
        import scipy.sparse as sp

        fmt = self._t.scipy_format()
        if fmt is None or self.ndim != 2:
            raise ArgumentError(
                "to_scipy: SciPy has no format for %s; convert(to=\"CSR\") first" % self.encoding
            )
        if self.value_type == "bf16":
            raise ArgumentError("to_scipy: SciPy has no bf16; convert(dtype=\"f32\") first")
        name, (r, c) = fmt
        values = self.values
        if copy:
            values = values.copy()
        if name == "coo":
            rows, cols = self._coo_columns()
            rows, cols = _scipy_indices((rows, cols), max(self.shape), copy)
            return sp.coo_array((values, (rows, cols)), shape=self.shape, copy=False)
        inner = self.shape[1] // c if name in ("csr", "bsr") else self.shape[0]
        indices, indptr = _scipy_indices((self.crd(1), self.pos(1)), max(inner, self.nnz), copy)
        if name == "bsr":
            data = values.reshape(-1, r, c)
            return sp.bsr_array((data, indices, indptr), shape=self.shape, blocksize=(r, c), copy=False)
        cls = sp.csr_array if name == "csr" else sp.csc_array
        return cls((values, indices, indptr), shape=self.shape, copy=False)

    def _coo_columns(self):
        first = self.crd(0)
        if len(first) == 2 * self.nnz and self.crd(1) is None:
            return first[0::2], first[1::2]  # array of structures: pairs
        return first, self.crd(1)

    def to_numpy(self):
        """The dense array (converted to the Dense encoding within the memory limit, then
        its values reshaped: no further copy)."""
        dense = self.convert(to="Dense")
        return dense.values.reshape(self.shape)

    def to_arrow(self):
        """The COO table as a ``pyarrow.Table`` (columns ``row``, ``col`` or ``i``,
        ``j``, ..., and ``value``), which exports ``__arrow_c_stream__``."""
        import pyarrow as pa

        if self.value_type == "bf16":
            raise ArgumentError("to_arrow: Arrow has no bf16; convert(dtype=\"f32\") first")
        coo = self.convert(to="COO:soa") if self.ndim > 1 else self.convert(to="COO")
        names = ["row", "col"] if self.ndim == 2 else ["ijklmnopqrstuvwxyz"[d] for d in range(self.ndim)]
        columns = {n: pa.array(coo.crd(d)) for d, n in enumerate(names)}
        columns["value"] = pa.array(coo.values)
        return pa.table(columns, metadata={"shape": "[" + ", ".join(map(str, self.shape)) + "]"})

    def __reduce__(self):
        if self.path is not None:
            from . import open as _open

            return (_open, (self.path,))
        from . import _from_spt_bytes

        return (_from_spt_bytes, (bytes(self._t.spt_bytes()),))


class Rows:
    """Outer coordinates ``start..stop`` of a CSR / CSC / BSR / BSC tensor, without a
    copy: ``pos`` as stored (``pos[0]`` is ``pos[1][start]`` of the tensor), ``crd`` and
    ``values`` of those rows only (``block`` values per stored entry)."""

    __slots__ = ("tensor", "start", "stop", "pos", "crd", "values", "block")

    def __init__(self, tensor, start, stop, pos, crd, values, block):
        self.tensor, self.start, self.stop = tensor, start, stop
        self.pos, self.crd, self.values, self.block = pos, crd, values, block

    def __len__(self):
        return self.stop - self.start

    def to_scipy(self, copy=False):
        """These rows as a SciPy array (``csr_array`` of ``stop - start`` rows for CSR;
        ``csc_array`` of that many columns for CSC; ``bsr_array`` for BSR). Only the
        positions are copied (rebased to start at 0)."""
        import scipy.sparse as sp

        fmt = self.tensor._t.scipy_format()
        if fmt is None:
            raise ArgumentError("to_scipy: SciPy has no format for %s" % self.tensor.encoding)
        name, (r, c) = fmt
        shape = list(self.tensor.shape)
        values = self.values.copy() if copy else self.values
        rebased = self.pos - self.pos[0]
        if name == "csc":
            shape[1] = len(self)
            inner = shape[0]
        else:
            shape[0] = len(self) * r
            inner = shape[1] // c
        indices, indptr = _scipy_indices((self.crd, rebased), max(inner, len(self.crd)), copy)
        if name == "bsr":
            return sp.bsr_array((values.reshape(-1, r, c), indices, indptr), shape=shape, blocksize=(r, c), copy=False)
        cls = sp.csc_array if name == "csc" else sp.csr_array
        return cls((values, indices, indptr), shape=shape, copy=False)


def _scipy_indices(arrays, bound, copy):
    """SciPy's index arrays: one signed type for all, int32 when ``bound`` (the largest
    index or position they can hold) fits it, else int64. Shared (a view) where the
    stored width is already that width, else converted once."""
    target = np.int32 if bound <= _INT32_MAX else np.int64
    out = []
    for a in arrays:
        if a.dtype.itemsize == np.dtype(target).itemsize and not copy:
            out.append(a.view(target))
        else:
            out.append(a.astype(target))
    return tuple(out)


_NUMPY_NAMES = {
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "bool",
    "complex64": "complex64",
    "complex128": "complex128",
}
