"""HDF5 cases of the peers comparison (imported by peers.py): the same 20M-nonzero matrix
as AnnData `.h5ad` (uncompressed, as anndata writes by default, and gzip level 4),
binsparse CSR (the reference writer) and a 10x Genomics `.h5` (CSC, gzip + shuffle
chunks as Cell Ranger writes them). Our side is a dry run (read and build, no output)
into the arrays the peer holds (same index widths), so both sides only read and build."""
import os
import subprocess
import textwrap


def generate(py, data, quick):
    """The four files, written once (fixed seed)."""
    n, m, per = (20_000, 30_000, 100) if quick else (200_000, 30_000, 100)
    tag = f"{n}x{m}_{n * per}"
    paths = {k: os.path.join(data, f"{k}_{tag}{ext}") for k, ext in
             [("h5ad", ".h5ad"), ("h5ad_gzip", ".h5ad"), ("bsp", ".bsp.h5"), ("tenx", ".h5")]}
    done = os.path.join(data, f"hdf5_{tag}.done")
    if os.path.exists(done):
        return paths, n * per
    code = textwrap.dedent(f"""
        import numpy as np, scipy.sparse as sp, anndata, binsparse, binsparse.conversions, h5py
        rng = np.random.default_rng(11)
        n, m, per = {n}, {m}, {per}
        nnz = n * per
        step = m // per
        indptr = np.arange(0, nnz + 1, per, dtype=np.int32)
        indices = (np.arange(per, dtype=np.int32)[None, :] * step
                   + rng.integers(0, step, (n, per), dtype=np.int32)).reshape(-1)
        counts = rng.geometric(0.3, nnz).astype(np.int32)
        X = sp.csr_matrix((counts.astype(np.float32), indices, indptr), shape=(n, m))
        a = anndata.AnnData(X=X)
        a.obs_names = [f"cell{{i}}" for i in range(n)]
        a.var_names = [f"gene{{j}}" for j in range(m)]
        a.write_h5ad({paths['h5ad']!r})
        a.write_h5ad({paths['h5ad_gzip']!r}, compression="gzip", compression_opts=4)
        binsparse.save_binsparse(binsparse.conversions.from_scipy(X), {paths['bsp']!r})
        # 10x: genes x cells CSC is the cells x genes CSR's arrays.
        with h5py.File({paths['tenx']!r}, "w") as f:
            f.attrs["filetype"] = "matrix"
            f.attrs["version"] = 2
            g = f.create_group("matrix")
            def put(name, x):
                g.create_dataset(name, data=x, chunks=(min(80000, len(x)),), compression="gzip", shuffle=True)
            put("data", counts)
            put("indices", indices.astype(np.int64))
            put("indptr", indptr.astype(np.int64))
            put("shape", np.array([m, n], dtype=np.int32))
            g.create_dataset("barcodes", data=np.array([f"CELL{{i}}-1".encode() for i in range(n)]))
            feats = g.create_group("features")
            feats.create_dataset("id", data=np.array([f"ENSG{{j:08d}}".encode() for j in range(m)]))
            feats.create_dataset("name", data=np.array([f"G{{j}}".encode() for j in range(m)]))
    """)
    subprocess.run([py, "-c", code], check=True)
    open(done, "w").close()  # a run cut short regenerates every file
    return paths, n * per


def cases(py, data, runs, time_ours, time_peer, field, args, quick):
    """(title, rows) for each HDF5 case."""
    paths, nnz = generate(py, data, quick)
    out = []
    ours_args = ["--threads", "2", "--quiet"]
    peer_ck = "print('CRC', checksum_native(A))"
    show_ours = lambda o: f"crc {field(o, 'checksum')}"
    show_peer = lambda o: " ".join(o.split()[-2:])
    for key, what, target, widths, setup, call in [
        ("h5ad", ".h5ad (anndata's default: no compression)", "CSR", ("32", "32"),
         "import anndata", "A = anndata.read_h5ad({p!r}).X"),
        ("h5ad_gzip", ".h5ad, gzip level 4", "CSR", ("32", "32"),
         "import anndata", "A = anndata.read_h5ad({p!r}).X"),
        ("bsp", "binsparse CSR (reference writer)", "CSR", ("32", "32"),
         "import binsparse, binsparse.conversions as c",
         "A = c.to_scipy(binsparse.load_binsparse({p!r}))"),
        ("tenx", "10x Genomics .h5 (CSC, gzip + shuffle chunks)", "CSC", ("64", "64"),
         "import h5py, numpy as np, scipy.sparse as sp",
         "f = h5py.File({p!r}, 'r')['matrix']; A = sp.csc_matrix((f['data'][:], f['indices'][:], f['indptr'][:]), shape=tuple(f['shape'][:]))"),
    ]:
        p = paths[key]
        cmd = [args.bin, p, "--to", target, "--pos-width", widths[0], "--crd-width", widths[1]] + ours_args
        ours = [time_ours(cmd) for _ in range(runs)]
        peer = [time_peer(setup, call.format(p=p), peer_ck) for _ in range(runs)]
        peer_name = {"h5ad": "anndata.read_h5ad", "h5ad_gzip": "anndata.read_h5ad",
                     "bsp": "binsparse.load_binsparse + to_scipy",
                     "tenx": "h5py + scipy.sparse.csc_matrix"}[key]
        target_note = "<= 0.6x" if key in ("h5ad_gzip", "tenx") else "<= 1.0x"
        out.append((f"{what} -> {target}, {nnz} nonzeros f32/i32 (target: ours {target_note}, peak RSS below)",
                    [(f"ours: sparse-convert --to {target} (dry run, 2 threads)", ours, show_ours),
                     (peer_name, peer, show_peer)]))
    return out
