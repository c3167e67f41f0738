"""An independent reader of the `.spt` file, written from `docs/SPT.md` and `ENCODING.md` alone.

It proves the specification is enough to read every file the library writes: for each file
named on the command line it checks the prefix, header, array directory, layout, array
lengths and (when the `xxhash` package is importable) every checksum, decodes the levels of
the encoding it parses from the header's text, maps level coordinates back to dimension
coordinates, and prints one line of JSON:

    {"file", "version", "dims", "value_type", "entries": [[c0, ..., value], ...],
     "labels": {"d": [...]}, "checksums_checked"}

Entries are in dimension order, padding excluded as the header's `entries` field defines it,
sorted by coordinates. Values: integers as ints, floats as floats, bool as true/false,
complex as [re, im]. Any problem: a message on stderr naming the file, exit status 1.

Usage: python spt_reader.py FILE.spt [FILE2.spt ...]   (Python 3.11, NumPy; xxhash optional)
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

try:
    import xxhash
except ImportError:  # checksums are then not checked, and the output says so
    xxhash = None

MAGIC = b"SPTENSOR"
MAX_HEADER = 16 * 1024 * 1024
ALIGN = 64
U64_MAX = 2**64 - 1

# Element types as NumPy dtypes, little-endian (`u2`: four 2-bit coordinates per byte).
DTYPES = {
    "u2": None,
    "u8": "<u1",
    "u16": "<u2",
    "u32": "<u4",
    "u64": "<u8",
    "i8": "<i1",
    "i16": "<i2",
    "i32": "<i4",
    "i64": "<i8",
    "f16": "<f2",
    "bf16": "<u2",  # raw bits, widened to f32 when decoded
    "f32": "<f4",
    "f64": "<f8",
    "bool": "<u1",
    "complex64": "<c8",
    "complex128": "<c16",
}
VALUE_TYPES = [t for t in DTYPES if t != "u2"]
WIDTH_DTYPE = {0: "u64", 8: "u8", 16: "u16", 32: "u32", 64: "u64"}

HEADER_FIELDS = [
    "encoding",
    "dim_sizes",
    "lvl_sizes",
    "value_type",
    "nse",
    "entries",
    "binsparse",
    "provenance",
    "metadata",
    "checksum_algorithm",
    "chunk_bytes",
    "arrays",
]
OPTIONAL_FIELDS = {"binsparse", "chunk_bytes"}
BINSPARSE_TYPES = {
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "f32": "float32",
    "f64": "float64",
    "bool": "bint8",
    "complex64": "complex[float32]",
    "complex128": "complex[float64]",
}


class SptError(Exception):
    """A file that is not a valid `.spt` file (or that this reader cannot read)."""


def require(condition: bool, message: str) -> None:
    if not condition:
        raise SptError(message)


def is_u64(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= U64_MAX


def align64(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


# ---------------------------------------------------------------------------------------
# The encoding text (ENCODING.md): `#sparse_tensor.encoding<{ map = ..., posWidth = N }>`.


@dataclass
class Level:
    """One level: its expression over the dimensions and its format."""

    op: str  # "dim", "floordiv", "mod" or "ell" (the counting expression of ELL)
    dim: int
    const: int  # floordiv/mod divisor, ELL's K; 0 for "dim"
    fmt: str  # dense, compressed, loose_compressed, singleton, structured
    props: set = field(default_factory=set)
    n: int = 0  # structured[n, m]
    m: int = 0


@dataclass
class Encoding:
    rank: int
    levels: list
    pos_width: int
    crd_width: int
    ell: bool  # ELL: (slice k, row i, column j), one coordinate per slot, no pos


TOKEN = re.compile(r"\s*(->|[A-Za-z_][A-Za-z0-9_]*|\d+|[()\[\]{},:=*#<>?])")


def tokenize(text: str) -> list[str]:
    tokens, at = [], 0
    text = text.rstrip()
    while at < len(text):
        m = TOKEN.match(text, at)
        require(m is not None, f"encoding: unexpected text at {text[at : at + 20]!r}")
        tokens.append(m.group(1))
        at = m.end()
    return tokens


class EncodingParser:
    """Recursive descent over the tokens of the part between `<{` and `}>`."""

    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        require(tok is not None, "encoding: unexpected end")
        self.at += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.peek() == tok:
            self.at += 1
            return True
        return False

    def expect(self, tok: str) -> None:
        got = self.take()
        require(got == tok, f"encoding: expected `{tok}`, found `{got}`")

    def integer(self) -> int:
        tok = self.take()
        require(tok.isdigit(), f"encoding: expected a number, found `{tok}`")
        return int(tok)

    def names(self, close: str) -> list[str]:
        out = []
        while not self.accept(close):
            if out:
                self.expect(",")
            name = self.take()
            require(name[0].isalpha() or name[0] == "_", f"encoding: bad name `{name}`")
            require(self.peek() != ":", f"encoding: dimension `{name}` has a slice")
            out.append(name)
        return out

    def fields(self) -> Encoding:
        levels, dims, widths = None, [], {"posWidth": 0, "crdWidth": 0}
        while True:
            key = self.take()
            self.expect("=")
            if key == "map":
                dims, levels = self.level_map()
            elif key in widths:
                widths[key] = self.integer()
                allowed = (0, 2, 8, 16, 32, 64) if key == "crdWidth" else (0, 8, 16, 32, 64)
                require(widths[key] in allowed, f"encoding: {key} = {widths[key]}")
            else:
                raise SptError(f"encoding: field `{key}` is not supported by this reader")
            if not self.accept(","):
                break
        require(self.peek() is None, f"encoding: unexpected `{self.peek()}`")
        require(levels is not None, "encoding: no `map`")
        ell = bool(levels) and levels[0].op == "ell"
        return Encoding(len(dims), levels, widths["posWidth"], widths["crdWidth"], ell)

    def level_map(self) -> tuple[list[str], list[Level]]:
        symbols = self.names("]") if self.accept("[") else []
        self.expect("(")
        dims = self.names(")")
        self.expect("->")
        self.expect("(")
        levels = []
        while not self.accept(")"):
            if levels:
                self.expect(",")
            op, dim, const = self.expression(dims, symbols)
            self.expect(":")
            levels.append(self.level_format(op, dim, const))
        return dims, levels

    def expression(self, dims: list[str], symbols: list[str]) -> tuple[str, int, int]:
        """`d`, `d floordiv c`, `d mod c`, or ELL's product of d, a symbol and constants."""
        factors = self.product()
        used_dims = [f for f in factors if f in dims]
        used_syms = [f for f in factors if f in symbols]
        consts = [int(f) for f in factors if f.isdigit()]
        require(
            len(used_dims) == 1 and len(used_dims) + len(used_syms) + len(consts) == len(factors),
            f"encoding: unsupported level expression {' * '.join(factors)}",
        )
        dim = dims.index(used_dims[0])
        if used_syms or consts:
            require(len(used_syms) == 1 and consts, "encoding: unsupported level expression")
            return "ell", dim, math.prod(consts)
        if self.peek() in ("floordiv", "mod"):
            op = self.take()
            const = self.integer()
            require(const > 0, f"encoding: {op} by 0")
            return op, dim, const
        return "dim", dim, 0

    def product(self) -> list[str]:
        factors = []
        while True:
            if self.accept("("):
                factors += self.product()
                self.expect(")")
            else:
                factors.append(self.take())
            if not self.accept("*"):
                return factors

    def level_format(self, op: str, dim: int, const: int) -> Level:
        fmt = self.take()
        level = Level(op, dim, const, fmt)
        if fmt == "block2_4":
            level.fmt, level.n, level.m = "structured", 2, 4
        elif fmt == "structured":
            self.expect("[")
            level.n = self.integer()
            self.expect(",")
            level.m = self.integer()
            self.expect("]")
        else:
            require(
                fmt in ("dense", "compressed", "loose_compressed", "singleton"),
                f"encoding: level format `{fmt}` is not supported",
            )
        if self.accept("("):
            while True:
                prop = self.take()
                require(prop in ("nonunique", "nonordered", "soa"), f"encoding: property `{prop}`")
                level.props.add(prop)
                if not self.accept(","):
                    break
            self.expect(")")
        return level


def parse_encoding(text: str) -> Encoding:
    m = re.fullmatch(r"#sparse_tensor\.encoding<\{(.*)\}>", text, re.DOTALL)
    require(m is not None, f"encoding: not `#sparse_tensor.encoding<{{ ... }}>`: {text!r}")
    enc = EncodingParser(m.group(1)).fields()
    check_encoding(enc)
    return enc


def check_encoding(enc: Encoding) -> None:
    """The rules of ENCODING.md that this reader relies on."""
    levels = enc.levels
    if enc.ell:
        shape = [(lv.op, lv.dim, lv.fmt) for lv in levels]
        require(
            shape == [("ell", 0, "dense"), ("dim", 0, "dense"), ("dim", 1, "compressed")]
            and enc.rank == 2
            and levels[0].const > 0
            and not any(lv.props for lv in levels),
            "encoding: unsupported ELL form",
        )
    for lvl, lv in enumerate(levels):
        require(lv.op != "ell" or (enc.ell and lvl == 0), f"encoding: level {lvl}: misplaced ELL count")
        require(lv.fmt == "singleton" or "soa" not in lv.props, f"encoding: level {lvl}: soa")
        if lv.fmt == "singleton":
            parent = levels[lvl - 1] if lvl else None
            require(
                parent is not None
                and "nonunique" in parent.props
                and parent.fmt in ("compressed", "loose_compressed", "singleton"),
                f"encoding: level {lvl}: singleton without a nonunique parent",
            )
        if lv.fmt == "structured":
            require(
                0 < lv.n <= lv.m
                and lvl == len(levels) - 1
                and all(p.fmt == "dense" for p in levels[:lvl])
                and lv.op == "mod"
                and lv.const == lv.m
                and any(p.op == "floordiv" and p.dim == lv.dim and p.const == lv.m for p in levels[:lvl]),
                f"encoding: level {lvl}: structured[{lv.n}, {lv.m}] is misplaced",
            )
    singletons = [lv for lv in levels if lv.fmt == "singleton"]
    require(len({"soa" in lv.props for lv in singletons}) <= 1, "encoding: soa on some singletons only")
    if enc.crd_width == 2:
        require(
            all(lv.fmt in ("structured", "dense") and lv.m <= 4 for lv in levels),
            "encoding: crdWidth = 2 outside structured[n, m <= 4] levels",
        )
    inverse_map(enc)  # raises if not invertible


def inverse_map(enc: Encoding) -> list:
    """For each dimension: ("dim", lvl) or ("split", l_floordiv, l_mod, c)."""
    out = []
    for d in range(enc.rank):
        direct = [lvl for lvl, lv in enumerate(enc.levels) if lv.op == "dim" and lv.dim == d]
        if direct:
            out.append(("dim", direct[0]))
            continue
        found = None
        for a, qa in enumerate(enc.levels):
            for b, rb in enumerate(enc.levels):
                if (qa.op, rb.op) == ("floordiv", "mod") and qa.dim == rb.dim == d and qa.const == rb.const:
                    found = ("split", a, b, qa.const)
        require(found is not None, f"encoding: dimension {d} cannot be recovered from the levels")
        out.append(found)
    return out


def level_sizes(enc: Encoding, dims: list[int]) -> list[int]:
    """ENCODING.md "Level sizes": a block shape that does not divide its dimension rounds up."""
    sizes = []
    for lv in enc.levels:
        if lv.op == "dim":
            sizes.append(dims[lv.dim])
        elif lv.op == "floordiv":
            sizes.append(-(-dims[lv.dim] // lv.const))
        else:  # mod c, or ELL's K
            sizes.append(lv.const)
    return sizes


def run_heads(enc: Encoding) -> dict[int, tuple[int, int]]:
    """Level -> (level whose `crd` holds its coordinates, stride of that `crd`).

    A level of an array-of-structures COO run maps to the run's head and the run's length
    (ENCODING.md "COO"); any other level to itself and 1.
    """
    out, lvl = {}, 0
    levels = enc.levels
    while lvl < len(levels):
        end = lvl + 1
        if levels[lvl].fmt in ("compressed", "loose_compressed") and "nonunique" in levels[lvl].props:
            while end < len(levels) and levels[end].fmt == "singleton" and "soa" not in levels[end].props:
                end += 1
        for k in range(lvl, end):
            out[k] = (lvl, end - lvl)
        lvl = end
    return out


def padded(enc: Encoding) -> bool:
    """Whether zeros can be padding (SPT.md `entries`): dense below sparse, n:m, ELL, all-dense."""
    fmts = [lv.fmt for lv in enc.levels]
    dense_below_sparse = any(
        f == "dense" and any(g != "dense" for g in fmts[:lvl]) for lvl, f in enumerate(fmts)
    )
    return enc.ell or "structured" in fmts or all(f == "dense" for f in fmts) or dense_below_sparse


# ---------------------------------------------------------------------------------------
# The array directory the encoding needs (SPT.md "The array directory").


def data_arrays(enc: Encoding, value_type: str) -> list[tuple[str, str]]:
    """(name, dtype) of the level arrays and `values`, in directory order."""
    pos_t = WIDTH_DTYPE[enc.pos_width]
    crd_t = "u64" if enc.crd_width == 2 else WIDTH_DTYPE[enc.crd_width]
    heads = run_heads(enc)
    out = []
    for lvl, lv in enumerate(enc.levels):
        ell_column = enc.ell and lvl == 2
        if lv.fmt in ("compressed", "loose_compressed") and not ell_column:
            out.append((f"pos[{lvl}]", pos_t))
        owns_crd = lv.fmt in ("compressed", "loose_compressed", "structured") or (
            lv.fmt == "singleton" and heads[lvl][0] == lvl
        )
        if owns_crd:
            packed = lv.fmt == "structured" and enc.crd_width == 2
            out.append((f"crd[{lvl}]", "u2" if packed else crd_t))
    out.append(("values", value_type))
    return out


def element_bytes(dtype: str, length: int) -> int:
    if dtype == "u2":
        return -(-length // 4)
    return length * np.dtype(DTYPES[dtype]).itemsize


# ---------------------------------------------------------------------------------------
# Prefix, header and directory (SPT.md "What a reader must check", steps 1-5).


def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """`object_pairs_hook` for `json`: refuses duplicate fields, at any depth."""
    out = {}
    for key, value in pairs:
        require(key not in out, f"header: duplicate field {key!r}")
        out[key] = value
    return out


def read_prefix(buf: bytes) -> tuple[int, int]:
    require(len(buf) >= 24, f"file: {len(buf)} bytes, shorter than the 24-byte prefix")
    magic, version, reserved, header_len = struct.unpack_from("<8sIIQ", buf)
    require(magic == MAGIC, f"prefix: magic {magic!r} is not {MAGIC!r}")
    require(version in (1, 2), f"prefix: version {version} (this reader knows 1 and 2)")
    require(reserved == 0, f"prefix: reserved word {reserved}, not 0")
    require(header_len <= MAX_HEADER, f"prefix: header_len {header_len} is above 16 MiB")
    require(24 + header_len <= len(buf), f"prefix: header_len {header_len} runs past the file's end")
    require(
        (24 + header_len) % ALIGN == 0, f"prefix: 24 + header_len = {24 + header_len} is not a multiple of 64"
    )
    return version, header_len


def read_header(buf: bytes, header_len: int) -> dict:
    try:
        text = buf[24 : 24 + header_len].decode("utf-8")
    except UnicodeDecodeError as e:
        raise SptError(f"header: not UTF-8 ({e})") from None
    start = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        header, end = json.JSONDecoder(object_pairs_hook=no_duplicates).raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise SptError(f"header: not JSON ({e})") from None
    require(set(text[end:]) <= {" "}, "header: the JSON is followed by something other than spaces")
    require(isinstance(header, dict), "header: not a JSON object")
    return header


def check_header(h: dict, version: int) -> tuple[Encoding, list[int]]:
    """Step 3-4: fields, types and cross-checks. Returns the encoding and the level sizes."""
    unknown = set(h) - set(HEADER_FIELDS)
    require(not unknown, f"header: unknown fields {sorted(unknown)}")
    required = set(HEADER_FIELDS) - OPTIONAL_FIELDS | ({"chunk_bytes"} if version == 2 else set())
    require(required <= set(h), f"header: missing fields {sorted(required - set(h))}")
    require(version == 2 or "chunk_bytes" not in h, "header: chunk_bytes in a version 1 file")
    require(isinstance(h["encoding"], str), "header: encoding is not a string")
    enc = parse_encoding(h["encoding"])
    dims, lvls = h["dim_sizes"], h["lvl_sizes"]
    require(isinstance(dims, list) and all(map(is_u64, dims)), "header: dim_sizes is not an array of u64")
    require(len(dims) == enc.rank, f"header: {len(dims)} dim_sizes for an encoding of rank {enc.rank}")
    sizes = level_sizes(enc, dims)
    require(lvls == sizes, f"header: lvl_sizes {lvls} disagree with the encoding's {sizes}")
    require(h["value_type"] in VALUE_TYPES, f"header: unknown value_type {h['value_type']!r}")
    require(is_u64(h["nse"]) and is_u64(h["entries"]), "header: nse and entries must be u64")
    require(h["entries"] <= h["nse"], f"header: entries {h['entries']} above nse {h['nse']}")
    require(h["checksum_algorithm"] == "xxh3-64", f"header: checksum_algorithm {h['checksum_algorithm']!r}")
    if version == 2:
        cb = h["chunk_bytes"]
        require(
            is_u64(cb) and 64 <= cb <= 2**30 and cb & (cb - 1) == 0,
            f"header: chunk_bytes {cb} is not a power of two from 64 to 2^30",
        )
    bs = binsparse_descriptor(enc, h)
    require(h.get("binsparse") == bs, f"header: binsparse {h.get('binsparse')}, expected {bs}")
    check_provenance(h["provenance"], enc.rank)
    require(isinstance(h["metadata"], dict), "header: metadata is not an object")
    require(isinstance(h["arrays"], list), "header: arrays is not an array")
    return enc, sizes


def check_provenance(p, rank: int) -> None:
    require(
        isinstance(p, dict) and "slices" in p and set(p) <= {"slices", "source", "created_unix"},
        "header: provenance must be {slices, source?, created_unix?}",
    )
    require(isinstance(p["slices"], list), "header: provenance.slices is not an array")
    for s in p["slices"]:
        require(
            isinstance(s, dict)
            and set(s) == {"dim", "offset", "size", "stride"}
            and all(map(is_u64, s.values())),
            f"header: bad provenance slice {s}",
        )
        require(s["dim"] < rank, f"header: provenance slice of dimension {s['dim']} (rank {rank})")
    require(isinstance(p.get("source", ""), str), "header: provenance.source is not a string")
    require(is_u64(p.get("created_unix", 0)), "header: provenance.created_unix is not a u64")


def binsparse_descriptor(enc: Encoding, h: dict) -> dict | None:
    """The descriptor SPT.md "binsparse descriptor" requires, or None."""
    if h["value_type"] in ("f16", "bf16") or enc.crd_width == 2 or enc.ell:
        return None
    shape = tuple((lv.op, lv.dim, lv.fmt, tuple(sorted(lv.props))) for lv in enc.levels)

    def lv(d, fmt, *props):
        return ("dim", d, fmt, props)

    table = {
        (lv(0, "dense"), lv(1, "compressed")): ("CSR", {"pointers_to_1": "pos[1]", "indices_1": "crd[1]"}),
        (lv(1, "dense"), lv(0, "compressed")): ("CSC", {"pointers_to_1": "pos[1]", "indices_1": "crd[1]"}),
        (lv(0, "compressed"), lv(1, "compressed")): (
            "DCSR",
            {
                "pointers_to_0": "pos[0]",
                "indices_0": "crd[0]",
                "pointers_to_1": "pos[1]",
                "indices_1": "crd[1]",
            },
        ),
        (lv(1, "compressed"), lv(0, "compressed")): (
            "DCSC",
            {
                "pointers_to_0": "pos[0]",
                "indices_0": "crd[0]",
                "pointers_to_1": "pos[1]",
                "indices_1": "crd[1]",
            },
        ),
        (lv(0, "compressed", "nonunique"), lv(1, "singleton", "soa")): (
            "COOR",
            {"indices_0": "crd[0]", "indices_1": "crd[1]"},
        ),
        (lv(0, "compressed"),): ("CVEC", {"indices_0": "crd[0]"}),
        (lv(0, "dense"),): ("DVEC", {}),
        (lv(0, "dense"), lv(1, "dense")): ("DMATR", {}),
        (lv(1, "dense"), lv(0, "dense")): ("DMATC", {}),
    }
    if shape not in table:
        return None
    fmt, arrays = table[shape]
    arrays = {**arrays, "values": "values"}
    dtypes = dict(data_arrays(enc, h["value_type"]))
    return {
        "arrays": arrays,
        "data_types": {k: BINSPARSE_TYPES[dtypes[v]] for k, v in arrays.items()},
        "format": fmt,
        "number_of_stored_values": h["nse"],
        "shape": h["dim_sizes"],
        "version": "0.1",
    }


def check_directory(h: dict, version: int, enc: Encoding) -> list[dict]:
    """Step 5: exactly the arrays needed, in order, with their types and sizes."""
    directory = h["arrays"]
    require(
        all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in directory),
        "directory: an entry is not an object with a name",
    )
    expected = data_arrays(enc, h["value_type"])
    names = [a["name"] for a in directory]
    n_data = len(expected)
    require(
        names[:n_data] == [n for n, _ in expected],
        f"directory: arrays {names[:n_data]}, the encoding needs {[n for n, _ in expected]}",
    )
    wanted = dict(expected)
    tail = names[n_data:]
    if version == 2:
        require(tail and tail[-1] == "checksums", "directory: `checksums` is not the last array")
        labels = tail[:-1]
        require(len(labels) % 2 == 0, "directory: label arrays come in pairs")
        last = -1
        for k in range(0, len(labels), 2):
            m = re.fullmatch(r"label_offsets\[(0|[1-9][0-9]*)\]", labels[k])
            require(m is not None, f"directory: unexpected array {labels[k]!r}")
            d = int(m.group(1))
            require(last < d < enc.rank, f"directory: labels of dimension {d} out of order or range")
            require(labels[k + 1] == f"label_bytes[{d}]", f"directory: {labels[k + 1]!r} after {labels[k]}")
            last = d
        wanted.update({n: "u8" for n in labels if n.startswith("label_bytes")})
        wanted["checksums"] = "u64"
    else:
        require(not tail, f"directory: arrays {tail} after `values` in a version 1 file")
    for a in directory:
        name = a["name"]
        keys = {"name", "dtype", "len", "offset", "nbytes"}
        has_checksum = version == 1 or name == "checksums"
        require(
            set(a) == keys | ({"checksum"} if has_checksum else set()),
            f"directory: {name}: fields {sorted(a)}",
        )
        if name.startswith("label_offsets"):
            require(a["dtype"] in ("u32", "u64"), f"directory: {name}: dtype {a['dtype']}")
        else:
            require(
                a["dtype"] == wanted[name], f"directory: {name}: dtype {a['dtype']}, expected {wanted[name]}"
            )
        require(all(is_u64(a[k]) for k in ("len", "offset", "nbytes")), f"directory: {name}: bad numbers")
        size = element_bytes(a["dtype"], a["len"])
        require(a["nbytes"] == size, f"directory: {name}: nbytes {a['nbytes']}, len x size is {size}")
        if has_checksum:
            require(
                isinstance(a["checksum"], str) and re.fullmatch(r"[0-9a-f]{16}", a["checksum"]),
                f"directory: {name}: checksum is not 16 lowercase hex digits",
            )
    by_name = {a["name"]: a for a in directory}
    require(
        by_name["values"]["len"] == h["nse"],
        f"directory: values has {by_name['values']['len']} elements, nse {h['nse']}",
    )
    for name, a in by_name.items():
        if name.startswith("label_offsets"):
            d = int(name[len("label_offsets[") : -1])
            require(a["len"] == h["dim_sizes"][d] + 1, f"directory: {name} has {a['len']} elements")
    if version == 2:
        cb = h["chunk_bytes"]
        chunks = sum(-(-a["nbytes"] // cb) for a in directory[:-1])
        require(
            by_name["checksums"]["len"] == chunks,
            f"directory: checksums has {by_name['checksums']['len']} elements for {chunks} chunks",
        )
    return directory


def check_lengths(enc: Encoding, sizes: list[int], by_name: dict) -> None:
    """Step 6: the array lengths agree with each other and the sizes, level by level."""
    heads = run_heads(enc)
    count = 1
    for lvl, lv in enumerate(enc.levels):
        head, stride = heads[lvl]
        if lv.fmt == "dense":
            count *= sizes[lvl]
        elif enc.ell and lvl == 2:
            require(
                by_name["crd[2]"]["len"] == count,
                f"ELL: crd[2] has {by_name['crd[2]']['len']}, K x rows is {count}",
            )
        elif lv.fmt in ("compressed", "loose_compressed"):
            npos = by_name[f"pos[{lvl}]"]["len"]
            want = count * 2 if lv.fmt == "loose_compressed" else count + 1
            require(npos == want, f"level {lvl}: pos[{lvl}] has {npos} elements, expected {want}")
            ncrd = by_name[f"crd[{lvl}]"]["len"]
            require(
                ncrd % stride == 0, f"level {lvl}: crd[{lvl}] length {ncrd} is not a multiple of {stride}"
            )
            count = ncrd // stride
        elif lv.fmt == "singleton":
            if head == lvl:
                require(
                    by_name[f"crd[{lvl}]"]["len"] == count, f"level {lvl}: crd[{lvl}] has the wrong length"
                )
        elif lv.fmt == "structured":
            count *= lv.n
            require(by_name[f"crd[{lvl}]"]["len"] == count, f"level {lvl}: crd[{lvl}] has the wrong length")
    require(
        by_name["values"]["len"] == count,
        f"values: {by_name['values']['len']} elements, the levels give {count}",
    )


def check_layout(buf: bytes, data_start: int, directory: list[dict]) -> None:
    """Step 7: offsets, zero padding, packed bits, exact file length."""
    end = 0
    for a in directory:
        name, off = a["name"], a["offset"]
        require(off % ALIGN == 0, f"layout: {name} at {off} is misaligned")
        require(off >= end, f"layout: {name} at {off} overlaps the array before it (ends at {end})")
        require(off == align64(end), f"layout: a hole before {name} ({end} .. {off})")
        require(data_start + off + a["nbytes"] <= len(buf), f"layout: {name} runs past the file's end")
        require(not any(buf[data_start + end : data_start + off]), f"layout: non-zero padding before {name}")
        if a["dtype"] == "u2" and a["len"] % 4:
            last = buf[data_start + off + a["nbytes"] - 1]
            require(last >> (2 * (a["len"] % 4)) == 0, f"layout: {name}: unused bits of the last byte set")
        end = off + a["nbytes"]
    total = data_start + align64(end)
    require(len(buf) == total, f"layout: file is {len(buf)} bytes, the directory gives {total}")
    require(not any(buf[data_start + end : total]), "layout: non-zero padding after the last array")


# ---------------------------------------------------------------------------------------
# Checksums (SPT.md "Checksums"; "Version 1").


def check_checksums(buf: bytes, data_start: int, h: dict, version: int) -> None:
    directory = h["arrays"]

    def raw(a):
        start = data_start + a["offset"]
        return buf[start : start + a["nbytes"]]

    if version == 1:
        for a in directory:
            got = xxhash.xxh3_64_hexdigest(raw(a))
            require(
                got == a["checksum"], f"checksum: {a['name']} hashes to {got}, header says {a['checksum']}"
            )
        return
    sums_entry = directory[-1]
    sums_bytes = raw(sums_entry)
    got = xxhash.xxh3_64_hexdigest(sums_bytes)
    require(
        got == sums_entry["checksum"],
        f"checksum: the checksums array hashes to {got}, header says {sums_entry['checksum']}",
    )
    sums = np.frombuffer(sums_bytes, dtype="<u8")
    cb, k = h["chunk_bytes"], 0
    for a in directory[:-1]:
        data = raw(a)
        for start in range(0, len(data), cb):
            chunk = data[start : start + cb]
            require(
                xxhash.xxh3_64_intdigest(chunk) == int(sums[k]),
                f"checksum: {a['name']} chunk {start // cb} (bytes {start}..{start + len(chunk)}) is damaged",
            )
            k += 1


# ---------------------------------------------------------------------------------------
# Arrays and levels (validation, SPT.md "What a reader must check").


def load_array(buf: bytes, data_start: int, a: dict) -> np.ndarray:
    start = data_start + a["offset"]
    if a["dtype"] == "u2":
        packed = np.frombuffer(buf, dtype=np.uint8, count=a["nbytes"], offset=start)
        fours = (packed[:, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3
        return fours.reshape(-1)[: a["len"]].astype(np.uint64)
    arr = np.frombuffer(buf, dtype=DTYPES[a["dtype"]], count=a["len"], offset=start)
    if a["dtype"] == "bf16":
        return (arr.astype(np.uint32) << 16).view(np.float32)
    if a["dtype"] == "bool":
        require(bool(np.all(arr <= 1)), f"{a['name']}: a bool byte other than 0 or 1")
        return arr.astype(bool)
    return arr


def segments(pos: np.ndarray, ids: np.ndarray, loose: bool, n_crd: int, lvl: int):
    """The child position ranges of parent positions `ids`: (lo, hi) per parent."""
    pos = pos.astype(np.uint64)
    if loose:
        lo, hi = pos[0::2], pos[1::2]
        require(
            bool(np.all(lo <= hi)) and bool(np.all(hi <= n_crd)),
            f"level {lvl}: a pos pair out of order or past crd",
        )
        order = np.argsort(lo, kind="stable")
        nonempty = order[lo[order] < hi[order]]
        require(bool(np.all(hi[nonempty][:-1] <= lo[nonempty][1:])), f"level {lvl}: overlapping segments")
        return lo[ids], hi[ids]
    require(
        pos[0] == 0 and bool(np.all(pos[:-1] <= pos[1:])) and pos[-1] == n_crd,
        f"level {lvl}: pos does not start at 0, decreases, or does not end at {n_crd}",
    )
    return pos[ids], pos[ids + 1]


def walk_levels(enc: Encoding, sizes: list[int], arrays: dict) -> tuple[np.ndarray, list[np.ndarray]]:
    """Every stored position of the last level, with its level coordinates: (ids, coords)."""
    heads = run_heads(enc)
    ids = np.zeros(1, dtype=np.int64)
    coords: list[np.ndarray] = []
    for lvl, lv in enumerate(enc.levels):
        head, stride = heads[lvl]
        crd = arrays.get(f"crd[{head}]")
        if crd is not None:
            crd = crd.astype(np.int64)
            require(
                bool(np.all(crd.reshape(-1, stride)[:, lvl - head] < sizes[lvl])),
                f"level {lvl}: a coordinate is not below the level size {sizes[lvl]}",
            )
        if lv.fmt == "dense":
            size = sizes[lvl]
            coords = [np.repeat(c, size) for c in coords] + [np.tile(np.arange(size), len(ids))]
            ids = (ids[:, None] * size + np.arange(size)).reshape(-1)
        elif lv.fmt in ("compressed", "loose_compressed") and not (enc.ell and lvl == 2):
            lo, hi = segments(
                arrays[f"pos[{lvl}]"], ids, lv.fmt == "loose_compressed", len(crd) // stride, lvl
            )
            lens = (hi - lo).astype(np.int64)
            parent = np.repeat(np.arange(len(ids)), lens)
            starts = np.cumsum(lens) - lens
            ids = (
                np.arange(int(lens.sum()), dtype=np.int64)
                - np.repeat(starts, lens)
                + np.repeat(lo.astype(np.int64), lens)
            )
            coords = [c[parent] for c in coords] + [crd[ids * stride]]
        elif lv.fmt == "structured":
            n = lv.n
            coords = [np.repeat(c, n) for c in coords]
            ids = (ids[:, None] * n + np.arange(n)).reshape(-1)
            coords.append(crd[ids])
            groups = crd.reshape(-1, n)
            require(bool(np.all(groups[:, 1:] > groups[:, :-1])), f"level {lvl}: n:m offsets not ascending")
        else:  # singleton, or ELL's column level: one coordinate per parent position
            coords.append(crd[ids * stride + (lvl - head)])
    return ids, coords


def check_order(enc: Encoding, coords: list[np.ndarray]) -> None:
    """Coordinates sorted (and unique) where the levels promise it, as whole level tuples."""
    levels = enc.levels
    if enc.ell or any("nonordered" in lv.props for lv in levels) or not coords or len(coords[0]) < 2:
        return
    # Tuples are unique unless a nonunique level is followed by anything but its singletons.
    nonunique = [lvl for lvl, lv in enumerate(levels) if "nonunique" in lv.props]
    strict = not nonunique or (
        "nonunique" not in levels[-1].props
        and all(lv.fmt == "singleton" for lv in levels[nonunique[-1] + 1 :])
    )
    table = np.stack(coords, axis=1)
    a, b = table[:-1], table[1:]
    differ = a != b
    first = np.argmax(differ, axis=1)
    rows = np.arange(len(a))
    ascending = a[rows, first] < b[rows, first]
    bad = (differ.any(axis=1) & ~ascending) | (~differ.any(axis=1) & strict)
    require(not bad.any(), f"order: entry {int(np.argmax(bad)) + 1} is out of order or repeated")


def to_dimensions(enc: Encoding, coords: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for how in inverse_map(enc):
        if how[0] == "dim":
            out.append(coords[how[1]])
        else:
            _, q, r, c = how
            out.append(coords[q] * c + coords[r])
    return out


def json_values(values: np.ndarray, value_type: str) -> list:
    if value_type.startswith("complex"):
        return [[float(v.real), float(v.imag)] for v in values]
    if value_type in ("f16", "bf16", "f32", "f64"):
        return [float(v) for v in values.astype(np.float64)]
    return values.tolist()


def read_labels(arrays: dict, directory: list[dict]) -> dict[str, list[str]]:
    out = {}
    for a in directory:
        m = re.fullmatch(r"label_offsets\[(\d+)\]", a["name"])
        if not m:
            continue
        d = m.group(1)
        offsets = arrays[a["name"]].astype(np.int64)
        data = arrays[f"label_bytes[{d}]"].tobytes()
        require(
            offsets[0] == 0 and bool(np.all(offsets[:-1] <= offsets[1:])) and offsets[-1] == len(data),
            f"labels of dimension {d}: bad offsets",
        )
        try:
            out[d] = [
                data[s:e].decode("utf-8")
                for s, e in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
            ]
        except UnicodeDecodeError as e:
            raise SptError(f"labels of dimension {d}: not UTF-8 or split inside a character ({e})") from None
    return out


def read_file(path: str) -> dict:
    with open(path, "rb") as f:
        buf = f.read()
    version, header_len = read_prefix(buf)
    h = read_header(buf, header_len)
    enc, sizes = check_header(h, version)
    directory = check_directory(h, version, enc)
    by_name = {a["name"]: a for a in directory}
    check_lengths(enc, sizes, by_name)
    data_start = 24 + header_len
    check_layout(buf, data_start, directory)
    if xxhash is not None:
        check_checksums(buf, data_start, h, version)
    arrays = {a["name"]: load_array(buf, data_start, a) for a in directory}

    ids, coords = walk_levels(enc, sizes, arrays)
    check_order(enc, coords)
    values = arrays["values"][ids]
    dims = to_dimensions(enc, coords)
    if padded(enc):
        keep = values != 0
        values, dims = values[keep], [c[keep] for c in dims]
    for d, c in enumerate(dims):
        require(bool(np.all(c < h["dim_sizes"][d])), f"an entry lies past dimension {d}'s size")
    require(len(values) == h["entries"], f"header: entries {h['entries']}, the file holds {len(values)}")
    order = np.lexsort(dims[::-1]) if dims else np.arange(len(values))
    columns = [c[order].tolist() for c in dims] + [json_values(values[order], h["value_type"])]
    return {
        "file": path,
        "version": version,
        "dims": h["dim_sizes"],
        "value_type": h["value_type"],
        "entries": [list(e) for e in zip(*columns, strict=True)],
        "labels": read_labels(arrays, directory),
        "checksums_checked": xxhash is not None,
    }


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            print(json.dumps(read_file(path), ensure_ascii=False))
        except (SptError, OSError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
