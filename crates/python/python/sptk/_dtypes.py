"""Value arrays in and out: NumPy's types, ml_dtypes' ``bfloat16``, and bit patterns.

NumPy has no bf16. ml_dtypes (the package JAX, TensorFlow and ONNX use) gives it one;
its arrays arrive here as what they are, and bf16 tensors hand their values out as
ml_dtypes ``bfloat16`` arrays. A ``uint16`` array is taken as bf16 or f16 *bits* only
when asked (``bits=True``): converting its numbers is the other reading, and guessing
between the two gives garbage weights without a word.
"""

import numpy as np

from ._errors import ArgumentError

_HALF = ("bf16", "f16")


def _is_ml_dtypes(dtype):
    return getattr(dtype.type, "__module__", "").split(".")[0] == "ml_dtypes"


def values_in(a, options, call):
    """``a`` (a NumPy array of values) as the native array to hand over and the name of
    the type whose bit patterns its elements are (or None: its own type). Takes
    ``bits`` out of ``options``, and ``dtype`` where ``bits=True`` has used it."""
    bits = options.pop("bits", None)
    if bits not in (None, True, False):
        raise ArgumentError("%s: bits= is True or False, not %r" % (call, bits))
    dtype = options.get("dtype")
    if _is_ml_dtypes(a.dtype):
        if a.dtype.name == "bfloat16":
            return _native(a.view(np.uint16)), "bf16"
        raise ArgumentError(
            "%s: values of ml_dtypes' %s have no sptk value type (sptk holds f16, bf16, "
            "f32, f64, integers, bool, complex): a.astype(np.float32) first" % (call, a.dtype.name)
        )
    if a.dtype.kind == "V":
        raise ArgumentError(
            "%s: values of NumPy type %s (%d bytes, no name: bf16 saved without ml_dtypes?) "
            "have no sptk value type; bf16 bits: a.view(np.uint16) with dtype=\"bf16\", "
            "bits=True" % (call, a.dtype.str, a.dtype.itemsize)
        )
    two_byte_integers = a.dtype.kind in "iu" and a.dtype.itemsize == 2
    if bits:
        if dtype not in _HALF:
            raise ArgumentError(
                "%s: bits=True takes the elements as bit patterns of dtype=\"bf16\" or "
                "\"f16\": say which" % call
            )
        if not two_byte_integers:
            raise ArgumentError(
                "%s: bits=True takes 2-byte integers (%s bits viewed as uint16), not %s"
                % (call, dtype, a.dtype)
            )
        del options["dtype"]
        return _native(a), dtype
    if two_byte_integers and dtype in _HALF and bits is None:
        raise ArgumentError(
            "%s: %s values with dtype=\"%s\": bits=True takes them as %s bit patterns "
            "(weights viewed as uint16); bits=False converts their numbers (48171 becomes "
            "48128.0)" % (call, a.dtype, dtype, dtype)
        )
    return _native(a), None


def numpy_dtype(value_type, names):
    """The NumPy dtype of ``value_type``'s values: ml_dtypes' ``bfloat16`` for bf16."""
    if value_type == "bf16":
        return np.dtype(_bfloat16())
    return np.dtype(names.get(value_type, value_type))


def values_out(array, value_type):
    """Values as handed out: bf16 bits (``uint16``) viewed as ml_dtypes ``bfloat16``."""
    return array.view(_bfloat16()) if value_type == "bf16" else array


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - a dependency of the package
        raise ArgumentError(
            "bf16 values need ml_dtypes for their NumPy type (pip install ml_dtypes); "
            "convert(dtype=\"f32\") does without"
        ) from None
    return ml_dtypes.bfloat16


def _native(a):
    """``a`` as a C-contiguous NumPy array in native byte order (a copy only if needed)."""
    a = np.ascontiguousarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a
