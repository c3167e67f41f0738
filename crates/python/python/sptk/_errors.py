"""The exceptions sptk raises. Each is an :class:`Error` and also the built-in exception it
fits, so ``except ValueError`` and ``except OSError`` catch what they would expect.

The messages are those of the ``sparse-convert`` command line: they name the file and
where in it (line and column, dataset, array, row group) the problem is.
"""


class Error(Exception):
    """Base class of every exception raised by sptk."""


class FileError(Error, OSError):
    """A path that cannot be opened, read or written (missing, no permission, ...)."""


class FormatError(Error, ValueError):
    """Input that is damaged or not what it claims, arrays that break their encoding's
    rules, or a conversion the data refuses (a full n:m group without ``prune=True``)."""


class ArgumentError(Error, ValueError):
    """An argument that does not make sense: encoding text that does not parse, an
    unknown keyword or value type, an output name whose format cannot be told."""


class MemoryLimitError(Error, MemoryError):
    """The memory limit (``memory_limit=``, default 7/8 of physical memory) refused an
    array before it was allocated; the message names the array."""


class InternalError(Error, RuntimeError):
    """A bug in sptk (a Rust panic, caught before it could reach Python)."""
