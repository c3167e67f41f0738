"""The peers comparison driven by peers.sh.

Each case generates its input once (fixed seeds), then times:
- ours: the whole `sparse-convert` process (start, read, build every output array, exit),
  as the wall time of the subprocess;
- the peer: its in-process call only (imports and file generation excluded), with
  time.perf_counter in a fresh Python process per run.
Every run prints nnz and a CRC-32 of the result's arrays next to its time, so a fast wrong
answer shows. Peak RSS comes from /usr/bin/time -v for both sides (the peer's includes the
Python interpreter and its imports).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import textwrap

DATA = os.environ.get("SPTK_BENCH_DATA", "/tmp/sptk-bench")
RUNS = int(os.environ.get("SPTK_BENCH_RUNS", "5"))
PY = sys.executable

# The checksum our CLI prints: CRC-32 of pos, crd widened to little-endian u64, then the
# values' little-endian bytes (sptk_tensor::Tensor::checksum).
CHECKSUM_PY = textwrap.dedent("""
    import zlib, numpy as np
    def checksum_csr(A):
        # CSR, CSC and BSR alike: pointers and indices widened to u64, then the data bytes.
        A.sum_duplicates(); A.sort_indices()
        c = zlib.crc32(A.indptr.astype('<u8').tobytes())
        c = zlib.crc32(A.indices.astype('<u8').tobytes(), c)
        c = zlib.crc32(A.data.astype('<f8').tobytes(), c)
        return '%08x' % c
    def checksum_native(A):
        # The arrays as they are (HDF5 peers): values in their own type, no sorting.
        c = zlib.crc32(np.asarray(A.indptr).astype('<u8').tobytes())
        c = zlib.crc32(np.asarray(A.indices).astype('<u8').tobytes(), c)
        c = zlib.crc32(np.ascontiguousarray(A.data).tobytes(), c)
        return '%08x' % c
""")


def generate_uniform_mtx(path, n, nnz, seed):
    """Uniform random coordinates, float64 values, written by fast_matrix_market."""
    if os.path.exists(path):
        return
    code = textwrap.dedent(f"""
        import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
        rng = np.random.default_rng({seed})
        r = rng.integers(0, {n}, {nnz}); c = rng.integers(0, {n}, {nnz})
        v = rng.random({nnz})
        fmm.mmwrite({path!r} + '.tmp', sp.coo_matrix((v, (r, c)), shape=({n}, {n})), parallelism=2)
    """)
    subprocess.run([PY, "-c", code], check=True)
    os.replace(path + ".tmp.mtx" if os.path.exists(path + ".tmp.mtx") else path + ".tmp", path)


def time_ours(cmd):
    """Runs our CLI under /usr/bin/time -v; returns (seconds, peak RSS MiB, stdout)."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h = float(wall.group(1) or 0)
    secs = h * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss, p.stdout


def time_peer(setup, call, result):
    """Runs `call` in a fresh Python; returns (seconds of the call, peak RSS MiB, output)."""
    code = CHECKSUM_PY + textwrap.dedent(f"""
        import time
        {setup}
        t0 = time.perf_counter()
        {call}
        t1 = time.perf_counter()
        print('SECONDS', t1 - t0)
        {result}
    """)
    p = subprocess.run(["/usr/bin/time", "-v", PY, "-c", code], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    secs = float(re.search(r"SECONDS ([\d.e-]+)", p.stdout).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss, p.stdout


def field(text, name):
    m = re.search(rf"^{name}\s+(\S+)", text, re.M)
    return m.group(1) if m else "?"


def case_mtx_to_csr(args, quick):
    n, nnz = (200_000, 2_000_000) if quick else (2_000_000, 20_000_000)
    path = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(path, n, nnz, seed=1)
    rows = []
    ours = [time_ours([args.bin, path, "--to", "CSR", "--threads", "2", "--quiet"]) for _ in range(RUNS)]
    rows.append(("ours: sparse-convert --to CSR (dry run, 2 threads)", ours,
                 lambda o: f"nse {field(o, 'nse')} crc {field(o, 'checksum')}"))
    peer = [time_peer("import fast_matrix_market as fmm",
                      f"A = fmm.mmread({path!r}, parallelism=2).tocsr()",
                      "print('NNZ', A.nnz, 'CRC', checksum_csr(A))") for _ in range(RUNS)]
    rows.append(("fast_matrix_market.mmread(parallelism=2).tocsr()", peer,
                 lambda o: " ".join(o.split()[-4:])))
    return f".mtx -> CSR, {n} x {n}, {nnz} uniform nonzeros (target: ours <= 0.55x, peak RSS below)", rows


def generate_tns(path, dims, nnz, seed):
    """Uniform random coordinates (1-based), float64 values, as FROSTT text, once."""
    if os.path.exists(path):
        return
    code = textwrap.dedent(f"""
        import numpy as np
        rng = np.random.default_rng({seed})
        dims = {list(dims)!r}
        cols = [rng.integers(1, d + 1, {nnz}) for d in dims]
        v = rng.random({nnz})
        with open({path!r} + '.tmp', 'w') as f:
            for start in range(0, {nnz}, 1_000_000):
                part = slice(start, start + 1_000_000)
                lines = [' '.join(map(str, t)) for t in zip(*(c[part].tolist() for c in cols), v[part].tolist())]
                f.write('\\n'.join(lines)); f.write('\\n')
    """)
    subprocess.run([PY, "-c", code], check=True)
    os.replace(path + ".tmp", path)


def csr_crc_of(args, path, to, extra=()):
    """Untimed: converts `path` into `to` (written to a .spt), then that file into CSR; the
    CSR checksum (sorted coordinates and values) shows which matrix `to` holds."""
    spt = os.path.join(DATA, "every.check.spt")
    subprocess.run([args.bin, path, "--to", to, "-o", spt, "--quiet", *extra], check=True)
    out = subprocess.run([args.bin, spt, "--to", "CSR", "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    os.remove(spt)
    return field(out, "checksum")


def case_mtx_to_every(args, quick):
    """Every target from one .mtx: ours (whole process) against our CSR and the SciPy route
    a user would take for the same layout."""
    n, nnz = (100_000, 1_000_000) if quick else (1_000_000, 10_000_000)
    path = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(path, n, nnz, seed=2)
    rows = []
    for to in ["CSR", "DCSR", "DCSC", "COO", "CSF", "BSC:4x4"]:
        runs = [time_ours([args.bin, path, "--to", to, "--threads", "2", "--quiet"]) for _ in range(RUNS)]
        crc = csr_crc_of(args, path, to)
        rows.append((f"ours: --to {to}", runs, lambda o, crc=crc: f"nse {field(o, 'nse')} as CSR {crc}"))
    peer_crc = "print('NNZ', A.nnz, 'as CSR', checksum_csr(A.tocsr()))"
    rows.append(("fmm.mmread(parallelism=2).tocsr().tocoo() (sorted COO)", [time_peer(
        "import fast_matrix_market as fmm",
        f"A = fmm.mmread({path!r}, parallelism=2).tocsr().tocoo()",
        peer_crc) for _ in range(RUNS)], lambda o: " ".join(o.split()[-5:])))
    rows.append(("fmm.mmread(parallelism=2).tocsc()", [time_peer(
        "import fast_matrix_market as fmm",
        f"A = fmm.mmread({path!r}, parallelism=2).tocsc()",
        peer_crc) for _ in range(RUNS)], lambda o: " ".join(o.split()[-5:])))
    return (f".mtx -> every layout, {n} x {n}, {nnz} uniform nonzeros, 2 threads (targets: each "
            f"<= 1.5x our CSR; DCSC <= 0.55x tocsc, COO <= 0.55x tocsr().tocoo(); ratios to tocsc)", rows)


def case_tns_to_csf(args, quick):
    """A 3-D .tns into CSF against a 2-D .tns of the same entry count into CSR."""
    nnz = 1_000_000 if quick else 10_000_000
    three = os.path.join(DATA, f"uniform3d_{nnz}.tns")
    two = os.path.join(DATA, f"uniform2d_{nnz}.tns")
    generate_tns(three, (2000, 2000, 2000), nnz, seed=3)
    generate_tns(two, (1_000_000, 1_000_000), nnz, seed=4)
    rows = []
    for path, to in [(three, "CSF"), (three, "COO"), (two, "CSR")]:
        runs = [time_ours([args.bin, path, "--to", to, "--threads", "2", "--quiet"]) for _ in range(RUNS)]
        rows.append((f"ours: {os.path.basename(path)} --to {to}", runs,
                     lambda o: f"nse {field(o, 'nse')} crc {field(o, 'checksum')}"))
    return f".tns -> CSF, {nnz} entries, 3-D vs 2-D (target: CSF <= 1.5x the 2-D CSR; ratios to it)", rows


def generate_mtx(path, code):
    """Runs `code` (which defines A) and writes A with fast_matrix_market, once."""
    if os.path.exists(path):
        return
    full = textwrap.dedent("""
        import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
    """) + textwrap.dedent(code) + f"\nfmm.mmwrite({path!r} + '.tmp.mtx', A, parallelism=2)\n"
    subprocess.run([PY, "-c", full], check=True)
    os.replace(path + ".tmp.mtx", path)


def spt_of(args, mtx):
    """Our CSR .spt of a Matrix Market file (made once)."""
    spt = mtx[:-4] + ".csr.v2.spt"  # the format version: older files would be measured otherwise
    if not os.path.exists(spt):
        subprocess.run([args.bin, mtx, "--to", "CSR", "-o", spt, "--quiet"], check=True)
    return spt


def case_csr_to_csc(args, quick):
    n, nnz = (100_000, 1_000_000) if quick else (1_000_000, 10_000_000)
    mtx = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_mtx(mtx, f"""
        rng = np.random.default_rng(2)
        A = sp.coo_matrix((rng.random({nnz}), (rng.integers(0, {n}, {nnz}), rng.integers(0, {n}, {nnz}))), shape=({n}, {n}))
    """)
    spt = spt_of(args, mtx)
    ours = [time_ours([args.bin, spt, "--to", "CSC", "--threads", "2", "--quiet"]) for _ in range(RUNS)]
    unverified = [time_ours([args.bin, spt, "--to", "CSC", "--threads", "2", "--quiet", "--no-verify"]) for _ in range(RUNS)]
    peer = [time_peer(f"import fast_matrix_market as fmm; A = fmm.mmread({mtx!r}, parallelism=2).tocsr(); A.sum_duplicates(); A.sort_indices()",
                      "B = A.tocsc()", "print('NNZ', B.nnz, 'CRC', checksum_csr(B))") for _ in range(RUNS)]
    check_ours = lambda o: f"nse {field(o, 'nse')} crc {field(o, 'checksum')}"
    return (f"CSR -> CSC, {n} x {n}, {nnz} uniform nonzeros (target: ours, whole process, <= 0.5x)",
            [("ours: sparse-convert m.spt --to CSC (whole process)", ours, check_ours),
             ("ours, --no-verify (no checksums)", unverified, check_ours),
             ("scipy: A.tocsc() (in memory)", peer, lambda o: " ".join(o.split()[-4:]))])


def case_csr_to_bsr(args, quick):
    nb, band = (25_000, 50) if quick else (250_000, 50)
    blocks = nb * 5 // 2  # 2.5 blocks per block row: 625k at full size
    mtx = os.path.join(DATA, f"banded4_{nb}.mtx")
    generate_mtx(mtx, f"""
        rng = np.random.default_rng(3)
        nb = {nb}; k = {blocks}
        bi = rng.integers(0, nb, k); bj = np.clip(bi + rng.integers(-{band}, {band} + 1, k), 0, nb - 1)
        key = np.unique(bi * nb + bj); bi = key // nb; bj = key % nb
        ii, jj = np.meshgrid(np.arange(4), np.arange(4), indexing='ij')
        r = (bi[:, None] * 4 + ii.ravel()[None, :]).ravel(); c = (bj[:, None] * 4 + jj.ravel()[None, :]).ravel()
        A = sp.coo_matrix((rng.random(r.size) + 0.5, (r, c)), shape=(4 * nb, 4 * nb))
    """)
    spt = spt_of(args, mtx)
    ours = [time_ours([args.bin, spt, "--to", "BSR:4x4", "--threads", "2", "--quiet"]) for _ in range(RUNS)]
    unverified = [time_ours([args.bin, spt, "--to", "BSR:4x4", "--threads", "2", "--quiet", "--no-verify"]) for _ in range(RUNS)]
    peer = [time_peer(f"import fast_matrix_market as fmm; A = fmm.mmread({mtx!r}, parallelism=2).tocsr(); A.sum_duplicates(); A.sort_indices()",
                      "B = A.tobsr((4, 4))", "print('NNZ', B.nnz, 'CRC', checksum_csr(B))") for _ in range(RUNS)]
    check_ours = lambda o: f"nse {field(o, 'nse')} crc {field(o, 'checksum')}"
    return (f"CSR -> BSR(4x4), {4 * nb} x {4 * nb}, dense 4x4 blocks within +-{band} block columns (target: ours, whole process, <= 1.0x)",
            [("ours: sparse-convert m.spt --to BSR:4x4 (whole process)", ours, check_ours),
             ("ours, --no-verify (no checksums)", unverified, check_ours),
             ("scipy: A.tobsr((4, 4)) (in memory)", peer, lambda o: " ".join(o.split()[-4:]))])


BODY_CRC_PY = textwrap.dedent("""
    import zlib
    def body_crc(path):
        # CRC-32 of the entry lines (comments and the size line skipped) and their count.
        c, n, seen_size = 0, 0, False
        with open(path, 'rb') as f:
            for line in f:
                if line.startswith(b'%'):
                    continue
                if not seen_size:
                    seen_size = True
                    continue
                c = zlib.crc32(line, c); n += 1
        return n, '%08x' % c
""")


def case_csr_to_mtx(args, quick):
    """Write the 20M matrix as .mtx: ours from its CSR .spt (whole process), fmm.mmwrite
    from a SciPy CSR in memory. The entry lines of both files must be the same bytes."""
    n, nnz = (200_000, 2_000_000) if quick else (2_000_000, 20_000_000)
    mtx = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(mtx, n, nnz, seed=1)
    spt = spt_of(args, mtx)
    ours_out = os.path.join(DATA, "written_ours.mtx")
    peer_out = os.path.join(DATA, "written_fmm.mtx")
    ours = [time_ours([args.bin, spt, "-o", ours_out, "--threads", "2", "--quiet"]) for _ in range(RUNS)]
    peer = [time_peer(f"import fast_matrix_market as fmm; A = fmm.mmread({mtx!r}, parallelism=2).tocsr(); A.sum_duplicates(); A.sort_indices()",
                      f"fmm.mmwrite({peer_out!r}, A, parallelism=2)", "") for _ in range(RUNS)]
    exec(BODY_CRC_PY, globals())
    ours_crc = body_crc(ours_out)
    peer_crc = body_crc(peer_out if os.path.exists(peer_out) else peer_out + ".mtx")
    for p in (ours_out, peer_out):
        if os.path.exists(p):
            os.remove(p)
    return (f"CSR -> .mtx file, {n} x {n}, {nnz} nonzeros (target: ours, whole process, <= 0.5x)",
            [("ours: sparse-convert m.spt -o m.mtx (whole process, fsync included)", ours, lambda o: f"lines {ours_crc[0]} crc {ours_crc[1]}"),
             ("fast_matrix_market.mmwrite(parallelism=2) (in memory)", peer, lambda o: f"lines {peer_crc[0]} crc {peer_crc[1]}")])


def time_open_row(exe, path, row):
    """Our in-process open + one row (the example prints its own timing)."""
    p = subprocess.run([exe, path, str(row)], capture_output=True, text=True, check=True)
    secs = float(re.search(r"SECONDS ([\d.e-]+)", p.stdout).group(1))
    return secs, 0.0, p.stdout


def case_open_row(args, quick):
    """Open a stored CSR matrix and read one row: ours (.spt, mmap) vs scipy.sparse.load_npz
    (uncompressed .npz) vs h5py on a binsparse HDF5 file (indptr[r:r+2], then the row)."""
    n, nnz = (200_000, 2_000_000) if quick else (2_000_000, 20_000_000)
    mtx = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(mtx, n, nnz, seed=1)
    spt = os.path.join(DATA, f"uniform_{n}_{nnz}.csr.spt")
    npz = os.path.join(DATA, f"uniform_{n}_{nnz}.npz")
    h5 = os.path.join(DATA, f"uniform_{n}_{nnz}.bsp.h5")
    if not os.path.exists(spt):
        subprocess.run([args.bin, mtx, "--to", "CSR", "--crd-width", "32", "-o", spt, "--quiet"], check=True)
    if not os.path.exists(npz) or not os.path.exists(h5):
        code = textwrap.dedent(f"""
            import json, h5py, numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
            A = fmm.mmread({mtx!r}, parallelism=2).tocsr(); A.sum_duplicates(); A.sort_indices()
            sp.save_npz({npz!r}, A, compressed=False)
            with h5py.File({h5!r}, 'w') as f:
                f.create_dataset('pointers_to_1', data=A.indptr.astype('<u8'))
                f.create_dataset('indices_1', data=A.indices.astype('<u4'))
                f.create_dataset('values', data=A.data)
                f.attrs['binsparse'] = json.dumps({{'binsparse': {{'version': '0.1', 'format': 'CSR',
                    'shape': list(A.shape), 'number_of_stored_values': int(A.nnz),
                    'data_types': {{'pointers_to_1': 'uint64', 'indices_1': 'uint32', 'values': 'float64'}}}}}})
        """)
        subprocess.run([PY, "-c", code], check=True)
    row = 12345
    check = lambda o: " ".join(o.split()[-4:])
    rows = [("ours: SptFile::open + row (in-process, mmap)", [time_open_row(args.open_row, spt, row) for _ in range(RUNS)], check)]
    rows.append(("h5py: open binsparse + indptr[r:r+2] + row", [time_peer(
        "import h5py",
        f"f = h5py.File({h5!r}, 'r'); p = f['pointers_to_1'][{row}:{row} + 2]; v = f['values'][p[0]:p[1]]; c = f['indices_1'][p[0]:p[1]]",
        "print('ROW_NNZ', len(v), 'SUM', float(v.sum()))") for _ in range(RUNS)], check))
    rows.append(("scipy.sparse.load_npz + A[r]", [time_peer(
        "import scipy.sparse as sp",
        f"A = sp.load_npz({npz!r}); r = A[{row}]",
        "print('ROW_NNZ', r.nnz, 'SUM', float(r.data.sum()))") for _ in range(RUNS)], check))
    return f"open a stored {n} x {n} CSR ({nnz} nonzeros) and read one row (ratios to load_npz)", rows


def time_peer_calls(setup, call, result, reps, env=None):
    """Runs `call` `reps` times in a fresh Python after `setup`; returns (median seconds of
    one call, peak RSS MiB, output)."""
    code = CHECKSUM_PY + textwrap.dedent(f"""
        import time, statistics
        {setup}
        ts = []
        for _ in range({reps}):
            t0 = time.perf_counter()
            {call}
            ts.append(time.perf_counter() - t0)
        print('SECONDS', statistics.median(ts))
        {result}
    """)
    p = subprocess.run(["/usr/bin/time", "-v", PY, "-c", code], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    secs = float(re.search(r"SECONDS ([\d.e-]+)", p.stdout).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss, p.stdout


def generate_banded_mtx(path, n, half, seed):
    """A banded matrix: 2 * half diagonals (offsets -half .. half - 1), random values."""
    if os.path.exists(path):
        return
    code = textwrap.dedent(f"""
        import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
        rng = np.random.default_rng({seed}); n = {n}
        offs = list(range(-{half}, {half}))
        A = sp.diags([rng.random(n - abs(o)) for o in offs], offs, shape=(n, n), format='csr')
        fmm.mmwrite({path!r} + '.tmp.mtx', A, parallelism=2)
    """)
    subprocess.run([PY, "-c", code], check=True)
    os.replace(path + ".tmp.mtx", path)


def case_spmv(args, quick):
    """y = A x with CSR f64 and 32-bit indices: ours (whole process, per run taken as
    (time of --repeat 41 - time of --repeat 1) / 40) against SciPy's A @ x and MKL
    (sparse_dot_mkl), each the median of 41 in-process calls."""
    n, nnz = (200_000, 2_000_000) if quick else (2_000_000, 20_000_000)
    uniform = os.path.join(DATA, f"uniform_{n}_{nnz}.mtx")
    generate_uniform_mtx(uniform, n, nnz, seed=1)
    banded = os.path.join(DATA, f"banded10_{n}.mtx")
    generate_banded_mtx(banded, n, 5, seed=6)
    x = os.path.join(DATA, f"x_{n}.npy")
    if not os.path.exists(x):
        subprocess.run([PY, "-c", f"import numpy as np; np.save({x!r}, np.random.default_rng(5).random({n}))"], check=True)
    mkl_rt = next((os.path.join(r, f) for r, _, fs in os.walk(os.path.dirname(os.path.dirname(PY)))
                   for f in fs if f.startswith("libmkl_rt.so")), None)
    rows_out = []
    for name, mtx in [("banded", banded), ("uniform", uniform)]:
        spt = mtx[:-4] + ".csr32.spt"
        if not os.path.exists(spt):
            subprocess.run([args.bin, mtx, "--to", "CSR", "--pos-width", "32", "--crd-width", "32",
                            "-o", spt, "--quiet"], check=True)
        y = os.path.join(DATA, "spmv.y.npy")
        # --no-mmap: A in private huge-page memory, as the peers' NumPy arrays are.
        cmd = [args.run_bin, "spmv", spt, "--x", x, "--threads", "2", "--quiet", "-o", y, "--no-mmap"]
        check_y = f"import numpy as np; print('SUM %.9e' % np.load({y!r}).sum())"
        ours = []
        for _ in range(RUNS):
            t41, rss, _ = time_ours(cmd + ["--repeat", "41"])
            t1, _, _ = time_ours(cmd + ["--repeat", "1"])
            out = subprocess.run([PY, "-c", check_y], capture_output=True, text=True).stdout
            ours.append(((t41 - t1) / 40, rss, out))
        stats = subprocess.run(cmd + ["--repeat", "41", "--stats"], capture_output=True, text=True).stdout
        bound = re.search(r"memory bandwidth \(triad\): ([\d.]+)", stats)
        bw = float(bound.group(1)) if bound else float("nan")
        bytes_ = nnz * 12 + (n + 1) * 4 + 8 * n + 16 * n
        med = statistics.median(r[0] for r in ours)
        label = (f"ours {name}: sparse-run spmv ({100 * bytes_ / med / 1e9 / bw:.0f}% of the bound, "
                 f"triad {bw:.1f} GB/s)")
        check = lambda o: o.strip()
        setup = f"import numpy as np, fast_matrix_market as fmm; A = fmm.mmread({mtx!r}, parallelism=2).tocsr(); A.sum_duplicates(); A.sort_indices(); x = np.load({x!r})"
        scipy_runs = [time_peer_calls(setup, "y = A @ x", "print('SUM %.9e' % y.sum())", 41) for _ in range(RUNS)]
        rows = [(label, ours, check), (f"scipy {name}: A @ x", scipy_runs, lambda o: o.split("\n")[-2])]
        if mkl_rt:
            env = {"MKL_RT": mkl_rt, "MKL_NUM_THREADS": "2"}
            mkl_runs = [time_peer_calls(setup + "; import sparse_dot_mkl as m",
                                        "y = m.dot_product_mkl(A, x)", "print('SUM %.9e' % y.sum())", 41, env)
                        for _ in range(RUNS)]
            rows.append((f"MKL {name}: sparse_dot_mkl.dot_product_mkl(A, x), 2 threads", mkl_runs,
                         lambda o: o.split("\n")[-2]))
            # Rounds of ours and MKL back to back: the bandwidth drifts between runs here.
            paired = subprocess.run([PY, os.path.join(os.path.dirname(__file__), "paired_spmv.py"),
                                     args.run_bin, spt, mtx, x, str(RUNS)], capture_output=True,
                                    text=True, env={**os.environ, **env})
            print(f"SpMV {name}, " + (paired.stdout.strip() or paired.stderr.strip()))
        rows_out.append((name, rows))
    title = (f"SpMV y = A x, CSR f64 with 32-bit indices, {n} x {n}, {nnz} nonzeros, 2 threads "
             f"(targets: ours >= 1.0x MKL's speed on banded and >= 1.2x on uniform, >= 70% of the bound on banded, >= 1.5x SciPy on uniform)")
    # One table per matrix, ratios to the last row (MKL where it is installed).
    for name, rows in rows_out[:-1]:
        report(f"{title}: {name}", rows)
    return f"{title}: {rows_out[-1][0]}", rows_out[-1][1]


def case_spmm(args, quick):
    """Y = A X with 64 right-hand sides, CSR f64 with 32-bit indices, on the banded matrix of
    case_spmv. Both sides in process: ours the median per run that `sparse-run --stats`
    measures around the kernel call (5 runs per process), the peers the median of their
    calls. (A whole-process difference, as for SpMV, drowns in the 3-5 s of reading the
    1 GB X and writing the 1 GB Y.)"""
    n = 200_000 if quick else 2_000_000
    banded = os.path.join(DATA, f"banded10_{n}.mtx")
    generate_banded_mtx(banded, n, 5, seed=6)
    spt = banded[:-4] + ".csr32.spt"
    if not os.path.exists(spt):
        subprocess.run([args.bin, banded, "--to", "CSR", "--pos-width", "32", "--crd-width", "32",
                        "-o", spt, "--quiet"], check=True)
    x = os.path.join(DATA, f"X64_{n}.npy")
    if not os.path.exists(x):
        subprocess.run([PY, "-c", f"import numpy as np; np.save({x!r}, np.random.default_rng(7).random(({n}, 64)))"], check=True)
    y = os.path.join(DATA, "spmm.y.npy")
    cmd = [args.run_bin, "spmm", spt, "--x", x, "--threads", "2", "--quiet", "-o", y, "--repeat", "5", "--stats"]
    check_y = f"import numpy as np; print('SUM %.9e' % np.load({y!r}).sum())"
    ours = []
    for _ in range(RUNS):
        _, rss, out = time_ours(cmd)
        per_run = float(re.search(r"([\d.]+) ms", out.splitlines()[-1]).group(1)) / 1e3
        check = subprocess.run([PY, "-c", check_y], capture_output=True, text=True).stdout
        ours.append((per_run, rss, check))
    setup = f"import numpy as np, fast_matrix_market as fmm; A = fmm.mmread({banded!r}, parallelism=2).tocsr(); A.sort_indices(); X = np.load({x!r})"
    rows = [("ours: sparse-run spmm (median per run, --stats)", ours, lambda o: o.strip())]
    rows.append(("scipy: A @ X", [time_peer_calls(setup, "Y = A @ X", "print('SUM %.9e' % Y.sum())", 3) for _ in range(RUNS)],
                 lambda o: o.split("\n")[-2]))
    mkl_rt = next((os.path.join(r, f) for r, _, fs in os.walk(os.path.dirname(os.path.dirname(PY)))
                   for f in fs if f.startswith("libmkl_rt.so")), None)
    if mkl_rt:
        env = {"MKL_RT": mkl_rt, "MKL_NUM_THREADS": "2"}
        rows.append(("MKL: sparse_dot_mkl.dot_product_mkl(A, X), 2 threads", [time_peer_calls(
            setup + "; import sparse_dot_mkl as m", "Y = m.dot_product_mkl(A, X)", "print('SUM %.9e' % Y.sum())", 5, env)
            for _ in range(RUNS)], lambda o: o.split("\n")[-2]))
    return (f"SpMM Y = A X, 64 right-hand sides, CSR f64 with 32-bit indices, banded {n} x {n}, "
            f"2 threads (target: ours >= 1.0x MKL's speed)", rows)


def generate_skewed_graph_mtx(path, n, m, seed):
    """A directed graph of n nodes and m edges whose sources and targets are skewed (a power
    of a uniform draw, then the nodes shuffled), as a web or social graph; duplicates summed."""
    if os.path.exists(path):
        return
    code = textwrap.dedent(f"""
        import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
        rng = np.random.default_rng({seed}); n, m = {n}, {m}
        src = (n * rng.random(m) ** 2.2).astype(np.int64); dst = (n * rng.random(m) ** 1.6).astype(np.int64)
        perm = rng.permutation(n); src = perm[src]; dst = perm[dst]
        A = sp.coo_matrix((rng.random(m), (src, dst)), shape=(n, n)).tocsr(); A.sum_duplicates()
        fmm.mmwrite({path!r} + '.tmp.mtx', A, parallelism=2)
    """)
    subprocess.run([PY, "-c", code], check=True)
    os.replace(path + ".tmp.mtx", path)


def case_spmv_transposed(args, quick):
    """y = A^T x on a CSR (a scatter: issue 53's graph case), f64 with 32-bit indices, on a
    975k-node graph of 5M skewed edges. Both sides in process: ours the median per call that
    `sparse-run spmv --transpose --stats` measures (41 calls a run), SciPy the median of 41
    calls of `A.T @ x` (one thread; SciPy has no other)."""
    n, m = (97_500, 500_000) if quick else (975_000, 5_000_000)
    graph = os.path.join(DATA, f"graph_{n}_{m}.mtx")
    generate_skewed_graph_mtx(graph, n, m, seed=3)
    spt = graph[:-4] + ".csr32.spt"
    if not os.path.exists(spt):
        subprocess.run([args.bin, graph, "--to", "CSR", "--pos-width", "32", "--crd-width", "32",
                        "-o", spt, "--quiet"], check=True)
    x = os.path.join(DATA, f"xg_{n}.npy")
    if not os.path.exists(x):
        subprocess.run([PY, "-c", f"import numpy as np; np.save({x!r}, np.random.default_rng(4).random({n}))"], check=True)
    y = os.path.join(DATA, "spmvt.y.npy")
    cmd = [args.run_bin, "spmv", spt, "--x", x, "--transpose", "--threads", "2", "--no-mmap",
           "--quiet", "-o", y, "--repeat", "41", "--stats"]
    check_y = f"import numpy as np; print('SUM %.9e' % np.load({y!r}).sum())"
    ours = []
    for _ in range(RUNS):
        _, rss, out = time_ours(cmd)
        per_call = float(re.search(r"([\d.]+) ms", out.splitlines()[-1]).group(1)) / 1e3
        check = subprocess.run([PY, "-c", check_y], capture_output=True, text=True).stdout
        ours.append((per_call, rss, check))
    setup = f"import numpy as np, fast_matrix_market as fmm; A = fmm.mmread({graph!r}, parallelism=2).tocsr(); A.sort_indices(); x = np.load({x!r})"
    rows = [("ours: sparse-run spmv --transpose (median per call, --stats)", ours, lambda o: o.strip()),
            ("scipy: A.T @ x", [time_peer_calls(setup, "y = A.T @ x", "print('SUM %.9e' % y.sum())", 41)
                                for _ in range(RUNS)], lambda o: o.split("\n")[-2])]
    return (f"SpMV^T y = A^T x, CSR f64 with 32-bit indices, skewed graph of {n} nodes and {m} edges, "
            f"2 threads (target: ours at least SciPy's speed, ratio <= 1.0x)", rows)


def report(title, rows):
    print(f"\n## {title}\n")
    print(f"| tool | median | runs | peak RSS MiB | ratio to peer | check |")
    print(f"|---|---|---|---|---|---|")
    peer_median = statistics.median(r[0] for r in rows[-1][1])
    for name, runs, check in rows:
        med = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        shown = f"{med:.3f}" if med >= 0.01 else f"{med * 1e6:.0f} µs"
        rss_shown = f"{rss:.0f}" if rss else "-"
        print(f"| {name} | {shown} | {len(runs)} | {rss_shown} | {med / peer_median:.3g}x | {check(runs[0][2])} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--open-row", required=True, help="the open_row example binary")
    ap.add_argument("--run-bin", required=True, help="the sparse-run binary")
    ap.add_argument("--quick", action="store_true", help="10x smaller inputs")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this (mtx_to_csr, csr_to_csc, ...)")
    args = ap.parse_args()
    os.makedirs(DATA, exist_ok=True)
    print(f"# sptk peers, {RUNS} runs each, data in {DATA}")
    for case in [case_mtx_to_csr, case_mtx_to_every, case_tns_to_csf, case_csr_to_csc, case_csr_to_bsr, case_csr_to_mtx, case_open_row, case_spmv, case_spmv_transposed, case_spmm]:
        if args.only not in case.__name__:
            continue
        try:
            report(*case(args, args.quick))
        except Exception as e:  # a benchmark reports; it never fails
            print(f"\n{case.__name__}: could not run: {e}")
    if args.only in "case_hdf5":
        try:
            import peers_hdf5
            for title, rows in peers_hdf5.cases(PY, DATA, RUNS, time_ours, time_peer, field, args, args.quick):
                report(title, rows)
        except Exception as e:  # a benchmark reports; it never fails
            print(f"\ncase_hdf5: could not run: {e}")
    if args.only in "case_tables" or "tables" in args.only:
        try:
            import peers_tables
            for title, rows in peers_tables.cases(PY, DATA, RUNS, time_ours, time_peer, field, args, args.quick, args.only):
                report(title, rows)
        except Exception as e:  # a benchmark reports; it never fails
            print(f"\ncase_tables: could not run: {e}")


if __name__ == "__main__":
    main()
