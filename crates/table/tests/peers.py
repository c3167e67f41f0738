"""Peer checks of sptk-table, run by tests/suite/peers.rs with the CI virtual environment.

`peers.py write DIR`: pyarrow writes tables the way data tools do (a hive-partitioned
dataset, every Parquet codec, dictionary and text columns, unsigned and narrow types, an
IPC stream) and DIR/expected.json says what each holds.

`peers.py check DIR`: opens every table sptk wrote (listed in DIR/cases.json) with
pyarrow (pq.read_table, pa.ipc.open_file / open_stream), builds the SciPy matrix and
compares it with what sptk says it wrote, exactly.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq


def canonical(rows, cols, vals):
    order = np.lexsort((cols, rows))
    return [[int(rows[i]), int(cols[i]), float(vals[i])] for i in order]


def write(d: Path):
    rng = np.random.default_rng(7)
    n = 5000
    rows = rng.integers(0, 300, n)
    cols = rng.integers(0, 200, n)
    # Unique coordinates, so that the expected content needs no summing.
    key = np.unique(rows * 1000 + cols)
    rng.shuffle(key)
    rows, cols = key // 1000, key % 1000
    vals = rng.integers(1, 1000, len(key)) / 4.0
    expected = {}
    meta = {b"shape": b"[300, 200]"}
    base = pa.table({"row": rows.astype(np.int64), "col": cols.astype(np.int64), "value": vals})
    base = base.replace_schema_metadata(meta)
    for codec in ["snappy", "gzip", "lz4", "zstd", "none"]:
        name = f"codec_{codec}.parquet"
        pq.write_table(base, d / name, compression=codec, row_group_size=700)
        expected[name] = {"shape": [300, 200], "entries": canonical(rows, cols, vals)}
    # A hive-partitioned dataset: the partition column is dropped from the files.
    part = base.append_column("part", pa.array(rows % 3, pa.int32()))
    ds.write_dataset(part, d / "dataset", format="parquet", partitioning=["part"],
                     partitioning_flavor="hive", max_rows_per_group=512, max_rows_per_file=1500)
    expected["dataset"] = {"shape": [300, 200], "entries": canonical(rows, cols, vals)}
    # Narrow and unsigned types, dictionary values, no shape (largest + 1).
    narrow = pa.table({
        "i": pa.array(rows.astype(np.uint16)),
        "j": pa.array(cols.astype(np.uint32)),
        "w": pa.array(vals.astype(np.float32)).dictionary_encode(),
    })
    pq.write_table(narrow, d / "narrow.parquet")
    expected["narrow.parquet"] = {
        "shape": [int(rows.max()) + 1, int(cols.max()) + 1],
        "entries": canonical(rows, cols, vals.astype(np.float32)),
    }
    # Text coordinates: numbered in order of first appearance.
    users = np.array([f"user{r}" for r in rows])
    text = pa.table({"row": pa.array(users).dictionary_encode(), "col": cols, "value": vals})
    with pa.ipc.new_file(d / "text.arrow", text.schema) as w:
        for b in text.to_batches(max_chunksize=999):
            w.write_batch(b)
    _, first = np.unique(users, return_index=True)
    order = {u: k for k, u in enumerate(users[np.sort(first)])}
    rr = np.array([order[u] for u in users])
    expected["text.arrow"] = {
        "shape": [len(order), int(cols.max()) + 1],
        "entries": canonical(rr, cols, vals),
        "labels0": list(users[np.sort(first)]),
    }
    # An IPC stream with ZSTD buffers.
    opts = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(d / "stream.arrows", base.schema, options=opts) as w:
        for b in base.to_batches(max_chunksize=1234):
            w.write_batch(b)
    expected["stream.arrows"] = {"shape": [300, 200], "entries": canonical(rows, cols, vals)}
    (d / "expected.json").write_text(json.dumps(expected))


def read_any(path: Path):
    name = path.name
    if name.endswith(".parquet"):
        return pq.read_table(path)
    if name.endswith(".arrows"):
        with pa.ipc.open_stream(path) as r:
            return r.read_all()
    with pa.ipc.open_file(path) as r:
        return r.read_all()


def check(d: Path):
    import scipy.sparse as sp
    cases = json.loads((d / "cases.json").read_text())
    failures = []
    for c in cases:
        t = read_any(d / c["file"])
        shape = json.loads(t.schema.metadata[b"shape"])
        names = c["columns"]
        coords = [t.column(n).to_numpy() for n in names]
        vals = t.column("value").to_numpy()
        if vals.dtype == np.float16:  # SciPy has no float16 matrices; widening is exact
            vals = vals.astype(np.float32)
        if len(names) == 2:
            m = sp.coo_matrix((vals, (coords[0], coords[1])), shape=shape).tocsr().tocoo()
            got = canonical(m.row, m.col, m.data)
        else:
            order = np.lexsort(tuple(reversed(coords)))
            got = [[int(x[i]) for x in coords] + [float(vals[i])] for i in order]
        want = c["entries"]
        if shape != c["shape"] or got != want:
            failures.append(f"{c['file']}: shape {shape} vs {c['shape']}, {len(got)} vs {len(want)} entries")
        for n, t_want in zip(names, c["types"]):
            if str(t.schema.field(n).type) != t_want:
                failures.append(f"{c['file']}: column {n} is {t.schema.field(n).type}, expected {t_want}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"{len(cases)} tables checked")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](Path(sys.argv[2]))
