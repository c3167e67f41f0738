"""sptk: sparse tensors in the exact layout your code wants.

Read any sparse input (Matrix Market, ``.spt``, SciPy ``.npz``, ``.npy``, safetensors,
MATLAB, HDF5 binsparse / AnnData / 10x, Parquet and Arrow tables), convert it into any
MLIR ``sparse_tensor`` encoding, share its arrays with NumPy and SciPy without a copy, and
write it to any of those formats atomically.

>>> import sptk
>>> A = sptk.read("A.mtx", to="CSR")
>>> A.write("A.spt")
>>> B = sptk.open("A.spt")          # header and directory only: microseconds
>>> m = B.to_scipy()                # csr_array sharing the file's memory

Which call checks what: ``open`` checks a ``.spt`` file's header and array directory;
the first call that needs its arrays validates them all once (every chunk checksum and
every invariant); ``rows(a, b)`` checks only the rows it returns; ``open(verify=True)``
and ``Tensor.validate()`` validate at once. Everything built by ``read``, ``convert`` and
``from_*`` is validated as it is built. Linux first.
"""

import os as _os

from . import _sptk
from ._errors import (
    ArgumentError,
    Error,
    FileError,
    FormatError,
    InternalError,
    MemoryLimitError,
)
from ._dtypes import _native, values_in as _values_in
from ._tensor import Rows, Tensor
from ._ewise import (
    add,
    div,
    divide,
    dot,
    ewise,
    first,
    maximum,
    minimum,
    mul,
    multiply,
    reduce,
    rowdot,
    second,
    sub,
    subtract,
)
from ._spgemm import matmul, spgemm
from ._structure import offdiag, pattern, symmetrize, transpose, tril, triu

__version__ = _sptk.__version__

__all__ = [
    "read",
    "open",
    "forget_open_files",
    "from_scipy",
    "from_numpy",
    "from_arrow",
    "spmv",
    "spmm",
    "ewise",
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "minimum",
    "maximum",
    "first",
    "second",
    "dot",
    "rowdot",
    "reduce",
    "spgemm",
    "matmul",
    "tril",
    "triu",
    "offdiag",
    "pattern",
    "transpose",
    "symmetrize",
    "Tensor",
    "Rows",
    "Error",
    "FileError",
    "FormatError",
    "ArgumentError",
    "MemoryLimitError",
    "InternalError",
]


def read(source, to=None, **options):
    """Read any input ``sparse-convert`` reads and convert it into ``to``.

    ``source``: a path (``str`` or ``os.PathLike``), ``"FILE:MEMBER"`` for a matrix inside a
    container (``"cells.h5ad:layers/counts"``), a folder (10x MEX, Parquet partitions), or
    a list of paths of one shape read as one tensor. The format comes from the content,
    then the name (``format="mtx"`` overrides both).

    ``to``: a preset (``"CSR"``, ``"CSC"``, ``"COO"``, ``"BSR"``, ``"BSR:4x4"``, ``"ELL"``,
    ``"2:4"``, ``"CSF"``, ``"Dense"``, ...) or encoding text (``"map = (i, j) -> (j :
    dense, i : compressed)"``). None: a stored encoding (``.spt``, ``.npz`` CSR, ...) is
    kept, anything else becomes CSR (a matrix) or COO (other ranks). Presets take the
    widths SciPy shares without a copy (32 bits, or 64 where the data needs them;
    ``pos_width="auto"`` / ``crd_width="auto"``: the narrowest that hold the data, as the
    command line takes them); encoding text keeps the widths it declares.

    Options, named as the command line's flags: ``dtype`` (``"f32"``, ``"bf16"``, ...),
    ``pos_width`` / ``crd_width`` (bits or ``"auto"``), ``memory_limit`` (bytes),
    ``prune``, ``drop_zeros``, ``keep_duplicates``, ``slice_values``, ``dataset``,
    ``format``, ``transpose``, and for tables ``columns``, ``value_column``
    (``"none"``: a pattern), ``shape``, ``index_base``, ``relabel`` (True,
    ``"shared"``, ``"separate"``), ``labels`` (the lists to number ids from, so two
    tables of one graph share one numbering: a Tensor, whose labels are used, the path
    of a ``.spt`` file, or a list per dimension of str lists or None; an id in a list
    keeps its position there, a new id is numbered after the list); ``threads``; ``mmap`` and ``checksums`` for ``.spt``;
    for HDF5, ``isolate`` (default True: libhdf5 runs in a helper process, this Python
    running ``sptk`` again, so a damaged file that crashes or hangs libhdf5 raises
    :class:`FormatError` instead of ending the interpreter; False: in this process, for
    trusted files), ``isolate_timeout`` (seconds) and ``isolate_helper`` (the program);
    for a 10x Genomics ``.h5``, ``feature_ids`` (default False: the features are labelled
    by gene symbol, as scanpy's ``read_10x_h5`` names them, repeated symbols made unique
    as anndata's ``var_names_make_unique`` does; True: by feature id).

    ``out``: a ``.spt`` path to convert into. A Matrix Market coordinate file into CSR or
    CSC is then converted out of core: read in passes, its arrays written to the file as
    they are finished, holding no more than ``memory_limit`` however large it is (other
    inputs and targets are converted in memory, then written). The file is written
    atomically and returned opened (memory-mapped, as :func:`open` returns it).

    Returns a validated :class:`Tensor`; the reader's notes are in ``Tensor.notes``.
    Runs without the GIL. Raises :class:`FileError`, :class:`FormatError`,
    :class:`ArgumentError` or :class:`MemoryLimitError` with the command line's message.
    """
    sources = source if isinstance(source, (list, tuple)) else [source]
    sources = [_os.fspath(s) for s in sources]
    options["to"] = to
    _given_labels(options)
    _hdf5_helper(options)
    t, notes = _sptk.read(sources, options)
    return Tensor(t, notes)


def open(path, verify=False, mmap=True, reuse=True):  # noqa: A001 - the name is the point
    """Open a ``.spt`` file, memory-mapped.

    Checks its header and array directory only (O(header): microseconds at any size).
    The arrays are validated (every chunk checksum, every invariant; O(size)) the first
    time a call needs them, or at once with ``verify=True`` (which also checks the entry
    count), or by ``Tensor.validate()``. ``Tensor.rows(a, b)`` checks only those rows.
    ``mmap=False`` reads the file into private memory instead (for files another
    process may change). The file must not be rewritten in place or truncated while
    the tensor or any array from it is alive (sptk's own writes replace files by rename).

    Opening the same file again reuses its mapping and checked header (``reuse=True``):
    the same path, device, inode, length and modification / change times as one of the
    last 8 files opened this way, so a file replaced or rewritten since is mapped anew.
    The kernel's part of an open (mapping, first page faults, unmapping) is then not paid
    per call, which matters for code that opens a file per request. Those files stay
    mapped (with the pages read) until :func:`forget_open_files` or until 8 newer ones
    take their place; ``reuse=False`` always maps the file anew.
    """
    return Tensor(_sptk.open(_os.fspath(path), verify, mmap, reuse))


def forget_open_files():
    """Let go of the files :func:`open` keeps for reuse (each mapping ends with the last
    tensor or array still using it)."""
    _sptk.forget_open_files()


def from_scipy(matrix, to=None, **options):
    """A tensor from a SciPy sparse matrix or array (CSR, CSC, BSR and COO as they are;
    other formats through ``tocsr()``).

    The arrays are copied once into the tensor's own memory (a NumPy array stays
    writable by its owner, and validated arrays must not change) and checked: pointers,
    indices in range; unsorted or repeated indices are sorted and summed. ``to`` and the
    options as for :func:`read`; with neither, the matrix keeps its format and widths.
    """
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise ArgumentError("from_scipy: a SciPy sparse matrix or array expected, not %s" % type(matrix).__name__)
    if matrix.format not in ("csr", "csc", "bsr", "coo"):
        return from_scipy(matrix.tocsr(), to, **options)
    options["to"] = to
    fmt = matrix.format
    shape = tuple(int(n) for n in matrix.shape)
    data, bits = _values_in(matrix.data, options, "from_scipy")
    if fmt in ("csr", "csc", "bsr"):
        block = tuple(matrix.blocksize) if fmt == "bsr" else (1, 1)
        t = _sptk.from_compressed(
            shape,
            fmt != "csc",
            block,
            _native(matrix.indptr),
            _native(matrix.indices),
            data.reshape(-1),
            bits,
            options,
        )
    else:
        coords = tuple(_native(c) for c in _coo_coords(matrix))
        t = _sptk.from_coordinates(list(shape), coords, data, bits, options)
    return Tensor(t)


def from_numpy(array, to=None, **options):
    """A tensor from a dense array's nonzeros (``-0.0`` counts as zero, NaN does not).

    ``from_numpy(w, to="2:4", prune=True)`` keeps the two largest magnitudes of every
    group of four (pruned weights). The array is copied once, then scanned without the
    GIL. ``to`` and the options as for :func:`read`.

    Values keep their type: ml_dtypes ``bfloat16`` arrays are bf16, ``float16`` f16.
    Weights whose bf16 (or f16) bits are held as ``uint16`` say so:
    ``from_numpy(w.view(np.uint16), dtype="bf16", bits=True)``; a 2-byte integer array
    with ``dtype="bf16"`` and no ``bits`` is refused (``bits=False`` converts its
    numbers instead).
    """
    import numpy as np

    options["to"] = to
    values, bits = _values_in(np.asarray(array), options, "from_numpy")
    return Tensor(_sptk.from_dense(values, bits, options))


def from_arrow(table, to=None, **options):
    """A tensor from a COO table held in memory: any object with ``__arrow_c_stream__``
    (a pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB result, pandas
    through ``pyarrow.Table.from_pandas``), read with the same column rules as a Parquet
    file (``columns``, ``value_column``, ``shape``, ``index_base``, ``relabel``: see
    :func:`read`). No file is written and the batches are not copied: they are read
    where the producer holds them, without the GIL, straight into CSR / CSC where ``to``
    asks for them (the nonzeros then exist once more, in the result). Without ``shape``
    (argument or schema metadata) the sizes are the largest coordinates + 1.
    """
    options["to"] = to
    _given_labels(options)
    t, notes = _sptk.from_arrow(table, options)
    return Tensor(t, notes)


def _given_labels(options):
    """``labels=``: a Tensor hands over its labels as they are (no list of str)."""
    labels = options.get("labels")
    if isinstance(labels, Tensor):
        options["labels"] = labels._t
    elif isinstance(labels, _os.PathLike):
        options["labels"] = _os.fspath(labels)


def _hdf5_helper(options):
    """Names the program libhdf5 runs in (``isolate=True``, the default): ``isolate_helper=``,
    else ``$SPTK_HDF5_HELPER``, else a script that runs this very Python on
    ``sptk._sptk.serve_hdf5`` (what ``sparse-convert``'s helper subcommand does), written
    once per Python and version into ``$XDG_CACHE_HOME/sptk`` (``~/.cache/sptk``)."""
    if not options.get("isolate", True) or options.get("isolate_helper"):
        return
    named = _os.environ.get("SPTK_HDF5_HELPER")
    if named:
        options["isolate_helper"] = named
        return
    import hashlib
    import sys
    import tempfile

    cache = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    folder = _os.path.join(cache, "sptk")
    try:
        _os.makedirs(folder, exist_ok=True)
    except OSError:
        folder = tempfile.gettempdir()
    module = _sptk.__file__
    # The script's own form is part of the key ("-IS", "_exit": a new form gets a new
    # file).
    key = hashlib.sha256(
        ("%s %s %s -IS _exit" % (sys.executable, module, __version__)).encode()
    ).hexdigest()[:16]
    path = _os.path.join(folder, "hdf5-helper-" + key)
    if not _os.path.exists(path):
        # The extension alone is loaded (not the package, which imports NumPy): a start
        # of about 30 ms instead of 150 (measured on a small .h5ad). `-IS` (isolated, no
        # `site`): the interpreter starts in 8 ms instead of 14 (a venv with the peers).
        # Once the answer is given it ends at once (`os._exit`: the caller waits for the
        # end, and the interpreter's own clean-up took about 4 ms of it).
        script = (
            "#!%s -IS\n"
            "# The HDF5 helper process of sptk %s: libhdf5 runs here, not in the caller.\n"
            "import importlib.machinery, importlib.util, os, sys\n"
            "loader = importlib.machinery.ExtensionFileLoader('sptk._sptk', %r)\n"
            "module = importlib.util.module_from_spec(importlib.util.spec_from_loader('sptk._sptk', loader))\n"
            "loader.exec_module(module)\n"
            "try:\n"
            "    module.serve_hdf5(sys.argv[2:])\n"
            "except Exception as e:\n"
            "    sys.stderr.write('sptk hdf5 helper: %%s\\n' %% e)\n"
            "    sys.stderr.flush()\n"
            "    os._exit(1)\n"
            "os._exit(0)\n" % (sys.executable, __version__, module)
        )
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".hdf5-helper-")
        with _os.fdopen(fd, "w") as f:
            f.write(script)
        _os.chmod(tmp, 0o755)
        _os.replace(tmp, path)
    options["isolate_helper"] = path


def _coo_coords(m):
    coords = getattr(m, "coords", None)
    return coords if coords is not None else (m.row, m.col)


def _from_spt_bytes(data):
    """Unpickling: a tensor from the bytes of a ``.spt`` file, verified."""
    return Tensor(_sptk.from_spt_bytes(data))


def spmv(a, x, y=None, alpha=1.0, beta=0.0, transpose=False, threads=0):
    """``alpha * A @ x + beta * y`` (``transpose``: ``A.T @ x``) as a new array, by the
    machine code ``sparse-run`` generates for A's exact encoding and widths (AVX2 /
    AVX-512 on x86-64), or its reference kernels where there is none. Computes in the
    wider type of A and the operands (f16 / bf16 in f32); results do not depend on
    ``threads`` (0: one per core). Runs without the GIL."""
    return _product(a, x, y, alpha, beta, threads, transpose, False)


def spmm(a, x, y=None, alpha=1.0, beta=0.0, threads=0):
    """``alpha * A @ X + beta * Y`` for a dense ``X`` of k columns, as :func:`spmv`."""
    return _product(a, x, y, alpha, beta, threads, False, True)


def _product(a, x, y, alpha, beta, threads, transpose, matrices):
    import numpy as np

    if not isinstance(a, Tensor):
        raise ArgumentError("A must be an sptk.Tensor (sptk.from_scipy(m) makes one)")
    # A pandas Series / DataFrame meets A by label: its index is matched to the labels of
    # the dimension it multiplies, as pandas' own ``df.dot(s)`` aligns.
    meets, gives = (0, 1) if transpose else (1, 0)
    columns = getattr(x, "columns", None) if matrices else None
    labelled = _is_pandas(x)
    if labelled:
        x = _aligned(a, x, meets, "x")
    if _is_pandas(y):
        y = _aligned(a, y, gives, "y")
    x = _floats(x, "x")
    y = None if y is None else _floats(y, "y")
    out = np.array(_sptk.product(a._t, x, y, float(alpha), float(beta), transpose, threads, matrices))
    out = out.reshape(-1, x.shape[1]) if x.ndim == 2 else out
    if not labelled:
        return out
    import pandas as pd

    index = a.labels(gives)
    index = pd.Index(index) if index is not None else pd.RangeIndex(len(out))
    if out.ndim == 2:
        return pd.DataFrame(out, index=index, columns=columns)
    return pd.Series(out, index=index)


def _is_pandas(a):
    """A pandas Series or DataFrame (an index to meet A's labels by), without importing
    pandas."""
    return hasattr(a, "index") and hasattr(a, "to_numpy")


def _aligned(a, x, dim, name):
    """A pandas ``x``'s values in the order of A's labels on ``dim`` (its index matched by
    text: the node 7 and the label "7" are one). Every label of A must be in the index;
    index entries A lacks meet an empty row or column of A and are left out. An A
    without labels there meets a default (0, 1, ...) index by position only."""
    import pandas as pd

    labels = a.labels(dim)
    size = a.shape[dim]
    if labels is None:
        if isinstance(x.index, pd.RangeIndex) and x.index.equals(pd.RangeIndex(size)):
            return x.to_numpy()
        raise ArgumentError(
            "%s: its index has labels, but dimension %d of A has none to meet them; "
            "%s.to_numpy() multiplies by position" % (name, dim, name)
        )
    index = pd.Index(x.index.map(str))
    if not index.is_unique:
        raise ArgumentError("%s: its index names %r more than once" % (name, index[index.duplicated()][0]))
    at = index.get_indexer(pd.Index(labels))
    missing = [labels[i] for i in (at < 0).nonzero()[0][:3]]
    if missing:
        raise ArgumentError(
            "%s: %d labels of A's dimension %d are not in its index (%s%s)"
            % (name, int((at < 0).sum()), dim, ", ".join(map(repr, missing)), ", ..." if (at < 0).sum() > 3 else "")
        )
    return x.to_numpy()[at]


def _floats(a, name):
    """A dense operand as the kernels take it: float64 and float32 as they are, float16
    and ml_dtypes' bfloat16 as float32; other types are refused, as ``sparse-run``
    refuses them (an int64 past 2**53 has no exact float)."""
    import numpy as np

    a = np.asarray(a)
    if a.dtype.name in ("float16", "bfloat16"):
        a = a.astype(np.float32)
    elif a.dtype not in (np.float32, np.float64):
        raise ArgumentError(
            "%s holds %s elements; an operand must be a real float array (f16, bf16, f32 or "
            "f64): convert it with numpy's astype first" % (name, a.dtype)
        )
    return _native(a)
