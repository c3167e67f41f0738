"""Opens files sptk wrote in the peer tools (anndata.read_h5ad, the binsparse reference
reader, mat73.loadmat) and checks that each holds the expected matrix.

Usage: python peers.py MANIFEST.json. The manifest lists cases: {"file", "peer", "member"
(MATLAB variable), "shape", "rows", "cols", "vals" (complex as [re, im] pairs),
"obs", "var" (AnnData names, optional)}. Exits 1 naming every case that differs.
"""
import json
import sys

import numpy as np
import scipy.sparse as sp


def coo_key(shape, rows, cols, vals):
    """Canonical COO without explicit zeros: sorted row-major."""
    rows, cols, vals = np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(vals)
    keep = vals != 0
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    order = np.lexsort((cols, rows))
    return tuple(shape), rows[order].tolist(), cols[order].tolist(), vals[order].tolist()


def from_matrix(m):
    if sp.issparse(m) and m.dtype.names == ("real", "imag"):
        # mat73 hands complex sparse matrices over with MATLAB's compound values (its
        # reading of libmatio's own files is the same): make them complex.
        m = sp.csc_matrix((m.data["real"] + 1j * m.data["imag"], m.indices, m.indptr), shape=m.shape)
    if sp.issparse(m):
        c = sp.coo_matrix(m)
        c.sum_duplicates()
        return coo_key(c.shape, c.row, c.col, c.data)
    a = np.asarray(m)
    r, c = np.nonzero(a)
    return coo_key(a.shape, r, c, a[r, c])


def expand_pointers(p):
    p = np.asarray(p, np.int64)
    return np.repeat(np.arange(len(p) - 1), np.diff(p))


def from_binsparse(path):
    import binsparse

    t = binsparse.load_binsparse(path)
    f = t.format
    v = np.asarray(t.values)
    shape = tuple(int(s) for s in t.shape)
    if f == "CSR":
        return coo_key(shape, expand_pointers(t.pointers_to_1), t.indices_1, v)
    if f == "CSC":
        return coo_key(shape, t.indices_1, expand_pointers(t.pointers_to_1), v)
    if f == "DCSR":
        return coo_key(shape, np.asarray(t.indices_0)[expand_pointers(t.pointers_to_1)], t.indices_1, v)
    if f == "DCSC":
        return coo_key(shape, t.indices_1, np.asarray(t.indices_0)[expand_pointers(t.pointers_to_1)], v)
    if f in ("COO", "COOR"):
        return coo_key(shape, t.indices_0, t.indices_1, v)
    if f == "COOC":
        return coo_key(shape, t.indices_1, t.indices_0, v)
    if f in ("DMAT", "DMATR"):
        return from_matrix(v.reshape(shape))
    if f == "DMATC":
        return from_matrix(v.reshape(shape[::-1]).T)
    raise ValueError(f"format {f} not checked here")


def main():
    cases = json.load(open(sys.argv[1]))
    bad = []
    for case in cases:
        vals = case["vals"]
        if vals and isinstance(vals[0], list):
            vals = [complex(re, im) for re, im in vals]
        want = coo_key(case["shape"], case["rows"], case["cols"], vals)
        peer = case["peer"]
        try:
            if peer == "anndata":
                import anndata

                a = anndata.read_h5ad(case["file"])
                got = from_matrix(a.X)
                for frame in ("obs", "var"):
                    names = case.get(frame)
                    have = list(getattr(a, frame + "_names"))
                    if names is not None and have != names:
                        bad.append(f"{case['file']}: {frame} names {have[:3]}... differ")
            elif peer == "binsparse":
                got = from_binsparse(case["file"])
            elif peer == "mat73":
                import mat73

                got = from_matrix(mat73.loadmat(case["file"])[case["member"]])
            else:
                raise ValueError(f"unknown peer {peer}")
        except Exception as e:  # a peer that cannot open our file is a failure
            bad.append(f"{case['file']} ({peer}): {e!r}")
            continue
        if got != want:
            bad.append(f"{case['file']} ({peer}): content differs: shape {got[0]} vs {want[0]}, {len(got[1])} vs {len(want[1])} entries")
    for b in bad:
        print(b)
    print(f"{len(cases) - len(bad)} of {len(cases)} files read by their peers with the expected content")
    sys.exit(1 if bad else 0)


main()
