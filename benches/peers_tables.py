"""Table cases of the peers comparison (imported by peers.py): one 20M-row COO table of a
2M x 2M matrix (uniform random coordinates, int32 columns, f64 values, unsorted, a few
duplicates) as pyarrow writes it by default, as Parquet (snappy, 1Mi-row groups) and as an
Arrow IPC file (Feather v2, LZ4); each read into CSR, ours against pyarrow + SciPy.
`--only tables_50m` adds the bounded-memory run: a 50M-row Parquet table into CSR, peak
RSS against the size of the CSR built."""
import os
import subprocess
import textwrap


def generate(py, data, rows, n, tag):
    paths = {k: os.path.join(data, f"coo_{tag}{ext}") for k, ext in
             [("parquet", ".parquet"), ("arrow", ".arrow"), ("npz", ".npz"), ("npz_stored", "_stored.npz")]}
    done = os.path.join(data, f"coo_{tag}.done")
    if os.path.exists(done):
        return paths
    code = textwrap.dedent(f"""
        import numpy as np, pyarrow as pa, pyarrow.parquet as pq, pyarrow.feather as feather
        rng = np.random.default_rng(5)
        rows, n = {rows}, {n}
        t = pa.table({{
            "row": rng.integers(0, n, rows, dtype=np.int32),
            "col": rng.integers(0, n, rows, dtype=np.int32),
            "value": rng.random(rows),
        }}).replace_schema_metadata({{"shape": f"[{{n}}, {{n}}]"}})
        pq.write_table(t, {paths['parquet']!r})
        feather.write_feather(t, {paths['arrow']!r})
        if rows <= 20_000_000:
            import scipy.sparse as sp
            A = sp.coo_matrix((t.column("value").to_numpy(), (t.column("row").to_numpy(), t.column("col").to_numpy())), shape=(n, n)).tocsr()
            sp.save_npz({paths['npz']!r}, A)
            sp.save_npz({paths['npz_stored']!r}, A, compressed=False)
    """)
    subprocess.run([py, "-c", code], check=True)
    open(done, "w").close()
    return paths


PEER_SETUP = "import pyarrow as pa, pyarrow.parquet as pq, pyarrow.feather as feather, scipy.sparse as sp, json"
PEER_CALL = {
    "parquet": "t = pq.read_table({p!r})",
    "arrow": "t = feather.read_table({p!r})",
}
NPZ_SETUP = "import scipy.sparse as sp"
NPZ_CALL = "A = sp.load_npz({p!r})"
PEER_BUILD = ("; s = json.loads(t.schema.metadata[b'shape']); "
              "A = sp.coo_matrix((t.column('value').to_numpy(), (t.column('row').to_numpy(), t.column('col').to_numpy())), shape=s).tocsr()")


def cases(py, data, runs, time_ours, time_peer, field, args, quick, only):
    out = []
    rows, n = (2_000_000, 200_000) if quick else (20_000_000, 2_000_000)
    paths = generate(py, data, rows, n, f"{n}_{rows}")
    show_ours = lambda o: f"crc {field(o, 'checksum')}"
    show_peer = lambda o: " ".join(o.split()[-2:])
    for key, what, peer_name in [
        ("parquet", "Parquet COO table (pyarrow default: snappy, 1Mi-row groups)", "pq.read_table + coo_matrix(...).tocsr()"),
        ("arrow", "Arrow IPC file (Feather v2, LZ4)", "feather.read_table + coo_matrix(...).tocsr()"),
    ]:
        p = paths[key]
        cmd = [args.bin, p, "--to", "CSR", "--pos-width", "32", "--crd-width", "32", "--threads", "2", "--quiet"]
        ours = [time_ours(cmd) for _ in range(runs)]
        peer = [time_peer(PEER_SETUP, PEER_CALL[key].format(p=p) + PEER_BUILD, "print('CRC', checksum_csr(A))") for _ in range(runs)]
        out.append((f"{what} -> CSR, {rows} rows, {n} x {n} (target: ours <= 0.5x, peak RSS below)",
                    [("ours: sparse-convert --to CSR (dry run, 2 threads)", ours, show_ours),
                     (peer_name, peer, show_peer)]))
    for key, what in [("npz", "SciPy .npz (save_npz default: deflated)"), ("npz_stored", "SciPy .npz, stored (compressed=False)")]:
        p = paths[key]
        cmd = [args.bin, p, "--to", "CSR", "--pos-width", "32", "--crd-width", "32", "--threads", "2", "--quiet"]
        ours = [time_ours(cmd) for _ in range(runs)]
        peer = [time_peer(NPZ_SETUP, NPZ_CALL.format(p=p), "print('CRC', checksum_csr(A))") for _ in range(runs)]
        out.append((f"{what} -> CSR, {n} x {n} (target: ours <= 1.0x, peak RSS below)",
                    [("ours: sparse-convert --to CSR (dry run, 2 threads)", ours, show_ours),
                     ("scipy.sparse.load_npz", peer, show_peer)]))
    if "tables_50m" in only:
        rows, n = 50_000_000, 5_000_000
        p = generate(py, data, rows, n, f"{n}_{rows}")["parquet"]
        cmd = [args.bin, p, "--to", "CSR", "--pos-width", "32", "--crd-width", "32", "--threads", "2", "--quiet"]
        ours = [time_ours(cmd) for _ in range(max(1, runs // 2))]
        csr_mib = (4 * (n + 1) + 12 * rows) / 2**20
        out.append((f"Parquet COO table -> CSR, {rows} rows (bounded memory: peak RSS <= 1.3x the CSR's {csr_mib:.0f} MiB)",
                    [("ours: sparse-convert --to CSR (dry run, 2 threads)", ours, show_ours)]))
    return out
