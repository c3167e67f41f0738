"""sptk.read / sptk.open / Tensor: files by other tools read exactly, arrays shared."""

import gc
import os
import pickle
import tempfile
import unittest
import weakref

import numpy as np
import scipy.io
import scipy.sparse as sp

import sptk

import gil

DATA = os.environ.get("SPTK_TESTDATA", os.path.join(os.path.dirname(__file__), "../../../../testdata"))


def data(*parts):
    return os.path.join(DATA, *parts)


class ReadTest(unittest.TestCase):
    def test_matrix_market_as_scipy_reads_it(self):
        for name in ["scipy_real_general.mtx", "scipy_complex.mtx", "fmm_real_symmetric.mtx", "scipy_pattern.mtx"]:
            with self.subTest(name=name):
                path = data("mtx", name)
                t = sptk.read(path, to="CSR")
                ours = t.to_scipy()
                theirs = sp.csr_array(scipy.io.mmread(path))
                theirs.sum_duplicates()
                self.assertEqual(ours.shape, theirs.shape)
                self.assertEqual((ours != theirs).nnz, 0)

    def test_shape_encoding_and_widths(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"), to="CSR")
        self.assertEqual(t.shape, (8, 8))
        self.assertIn("compressed", t.encoding)
        # A preset's unsaid widths: at least 32 bits in Python (what SciPy shares), the
        # narrowest on request.
        self.assertEqual(t.pos(1).dtype, np.uint32)
        narrow = sptk.read(data("examples", "fem_8x8.mtx"), to="CSR", pos_width="auto", crd_width="auto")
        self.assertEqual(narrow.pos(1).dtype, np.uint8)
        # Leaving `to` out is the CSR preset, the same widths included.
        self.assertEqual(sptk.read(data("examples", "fem_8x8.mtx")).encoding, t.encoding)
        self.assertEqual(t.values.dtype, np.float64)
        self.assertEqual(t.pos(0), None)
        self.assertEqual(len(t.values), t.nnz)

    def test_every_scipy_format(self):
        path = data("examples", "fem_8x8.mtx")
        dense = sptk.read(path).to_numpy()
        for to, kind in [("CSR", "csr"), ("CSC", "csc"), ("COO", "coo"), ("BSR:2x2", "bsr")]:
            with self.subTest(to=to):
                m = sptk.read(path, to=to).to_scipy()
                self.assertEqual(m.format, kind)
                np.testing.assert_array_equal(m.toarray(), dense)

    def test_labels_from_anndata(self):
        t = sptk.read(data("anndata", "adata_csr_f32.h5ad"), isolate=False)
        labels = t.labels(0)
        self.assertIsInstance(labels, list)
        self.assertEqual(len(labels), t.shape[0])
        self.assertTrue(all(isinstance(s, str) for s in labels))

    def test_table_file(self):
        t = sptk.read(data("arrow", "coo_i64_f64.parquet"), to="CSR")
        self.assertEqual(t.to_scipy().format, "csr")


class ZeroCopyTest(unittest.TestCase):
    def test_arrays_share_the_tensors_memory_and_keep_it_alive(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"), to="CSR")
        values, crd = t.values, t.crd(1)
        self.assertTrue(np.shares_memory(values, t.values))
        self.assertFalse(values.flags.writeable)
        expected = values.copy()
        ref = weakref.ref(t)
        del t
        gc.collect()
        self.assertIsNone(ref())
        np.testing.assert_array_equal(values, expected)  # still readable
        self.assertEqual(crd.max() < 8, True)

    def test_scipy_shares_the_arrays_of_an_opened_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.spt")
            sptk.read(data("examples", "fem_8x8.mtx"), to="CSR", pos_width=32, crd_width=32).write(path)
            t = sptk.open(path)
            m = t.to_scipy()
            self.assertEqual(m.indices.dtype, np.int32)
            self.assertTrue(np.shares_memory(m.indices, t.crd(1)))
            self.assertTrue(np.shares_memory(m.data, t.values))
            with self.assertRaises(ValueError):
                m.data *= 2  # read-only: copy=True gives writable arrays
            w = t.to_scipy(copy=True)
            w.data *= 2
            self.assertFalse(np.shares_memory(w.data, t.values))
            del t
            gc.collect()
            self.assertEqual(m.toarray().shape, (8, 8))

    def test_narrow_widths_are_converted_once(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"), to="CSR", crd_width=8)  # u8 indices
        m = t.to_scipy()
        self.assertEqual(m.indices.dtype, np.int32)
        self.assertFalse(np.shares_memory(m.indices, t.crd(1)))


class OpenTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "a.spt")
        sptk.read(data("examples", "fem_8x8.mtx"), to="CSR").write(self.path)

    def tearDown(self):
        self.dir.cleanup()

    def test_open_reads_the_header_only(self):
        t = sptk.open(self.path)
        self.assertFalse(t.info()["validated"])
        self.assertEqual(t.shape, (8, 8))
        t.values
        self.assertTrue(t.info()["validated"])

    def test_rows(self):
        full = sptk.read(data("examples", "fem_8x8.mtx")).to_scipy().toarray()
        for t in [sptk.open(self.path), sptk.open(self.path, verify=True)]:
            r = t.rows(2, 5)
            np.testing.assert_array_equal(r.to_scipy().toarray(), full[2:5])
            self.assertTrue(np.shares_memory(r.crd, t.crd(1)))
        empty = sptk.open(self.path).rows(3, 3)
        self.assertEqual(empty.to_scipy().shape, (0, 8))

    def test_reopening_reuses_the_mapping_of_the_same_file_only(self):
        a = sptk.open(self.path)
        b = sptk.open(self.path)
        self.assertTrue(np.shares_memory(a.values, b.values))  # one mapping
        self.assertFalse(np.shares_memory(a.values, sptk.open(self.path, reuse=False).values))
        # Replaced (sptk writes by rename): the new file is mapped, the old one still read.
        sptk.read(data("examples", "fem_8x8.mtx"), to="CSC").write(self.path)
        c = sptk.open(self.path)
        self.assertFalse(np.shares_memory(a.values, c.values))
        self.assertEqual(c.to_scipy().format, "csc")
        self.assertEqual(a.to_scipy().format, "csr")
        sptk.forget_open_files()
        self.assertFalse(np.shares_memory(c.values, sptk.open(self.path).values))

    def test_damaged_file_raises_and_python_lives(self):
        with open(self.path, "rb") as f:
            raw = bytearray(f.read())
        for at in range(len(raw) - 64, len(raw), 7):
            raw[at] ^= 0x5A
        bad = os.path.join(self.dir.name, "bad.spt")
        with open(bad, "wb") as f:
            f.write(bytes(raw))
        with self.assertRaises(sptk.FormatError):
            sptk.open(bad).validate()
        with self.assertRaises(ValueError):
            sptk.open(bad, verify=True)
        with open(bad, "wb") as f:
            f.write(b"not a file")
        with self.assertRaises(sptk.Error):
            sptk.open(bad)

    def test_missing_file_is_an_os_error(self):
        with self.assertRaises(OSError) as e:
            sptk.read(os.path.join(self.dir.name, "nothing.mtx"))
        self.assertIsInstance(e.exception, sptk.FileError)
        self.assertIn("nothing.mtx", str(e.exception))

    def test_pickle_by_path_and_by_bytes(self):
        t = sptk.open(self.path)
        u = pickle.loads(pickle.dumps(t))
        self.assertEqual(u.path, t.path)
        m = sptk.read(data("examples", "fem_8x8.mtx"), to="CSC")
        n = pickle.loads(pickle.dumps(m))
        self.assertEqual(n.encoding, m.encoding)
        np.testing.assert_array_equal(n.values, m.values)


class WriteTest(unittest.TestCase):
    def test_every_format_reads_back(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"), to="CSR")
        dense = t.to_numpy()
        with tempfile.TemporaryDirectory() as d:
            for name in ["a.spt", "a.mtx", "a.mtx.gz", "a.tns", "a.npz", "a.npy", "a.parquet", "a.arrow", "a.arrows", "a.h5", "a.h5ad", "a.levels"]:
                with self.subTest(name=name):
                    path = os.path.join(d, name)
                    t.write(path)
                    back = sptk.read(path, to="CSR", isolate=False, shape=[8, 8] if name.endswith(("parquet", "arrow", "arrows")) else None)
                    np.testing.assert_array_equal(back.to_numpy(), dense)
            self.assertEqual(sorted(os.listdir(d))[0], "a.arrow")  # no temporaries left

    def test_scipy_reads_our_npz(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"), to="CSC")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.npz")
            t.write(path)
            np.testing.assert_array_equal(sp.load_npz(path).toarray(), t.to_numpy())

    def test_unknown_name_is_an_argument_error(self):
        t = sptk.read(data("examples", "fem_8x8.mtx"))
        with self.assertRaises(sptk.ArgumentError):
            t.write("/tmp/x.unknown")


class OutTest(unittest.TestCase):
    def test_out_converts_past_the_memory_limit_into_the_file(self):
        # 300k entries into CSR need about 5 MB in memory; with a 2 MB limit the read goes
        # out of core into the file (in passes of a few of its row blocks), and the opened
        # file holds what SciPy reads.
        rng = np.random.default_rng(3)
        A = sp.random_array((30000, 2000), density=0.005, format="coo", rng=rng)
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "a.mtx")
            scipy.io.mmwrite(src, A)
            with self.assertRaises(sptk.MemoryLimitError):
                sptk.read(src, to="CSR", memory_limit=2_000_000)
            out = os.path.join(d, "a.spt")
            t = sptk.read(src, to="CSR", memory_limit=2_000_000, out=out)
            self.assertTrue(os.path.exists(out))
            want = A.tocsr()
            want.sum_duplicates()
            np.testing.assert_array_equal(t.to_scipy().toarray(), want.toarray())
            # The arrays of the conversion in memory, exactly (the headers differ only in
            # their provenance).
            in_memory = sptk.read(src, to="CSR")
            in_memory.write(os.path.join(d, "b.spt"))
            got, held = t.to_scipy(), in_memory.to_scipy()
            for name in ("indptr", "indices", "data"):
                np.testing.assert_array_equal(getattr(got, name), getattr(held, name))
            # A target without an out-of-core route: converted in memory, then written.
            t = sptk.read(src, to="COO", out=os.path.join(d, "c.spt"))
            np.testing.assert_array_equal(t.to_scipy().toarray(), want.toarray())
            self.assertEqual(sorted(os.listdir(d)), ["a.mtx", "a.spt", "b.spt", "c.spt"])
            # Only .spt files are written: another name is refused, nothing written.
            with self.assertRaisesRegex(ValueError, r"not named as a \.spt file"):
                sptk.read(src, to="CSR", out=os.path.join(d, "c.h5ad"))
            self.assertFalse(os.path.exists(os.path.join(d, "c.h5ad")))


class ArgumentTest(unittest.TestCase):
    def test_bad_encoding_and_keywords(self):
        path = data("examples", "fem_8x8.mtx")
        with self.assertRaises(sptk.ArgumentError):
            sptk.read(path, to="map = (i, j) -> (i : bogus)")
        with self.assertRaises(sptk.ArgumentError) as e:
            sptk.read(path, colums=["a"])
        self.assertIn("colums", str(e.exception))
        with self.assertRaises(ValueError):
            sptk.read(path, to="CSR", prune=True)

    def test_memory_limit(self):
        with self.assertRaises(MemoryError):
            sptk.read(data("examples", "fem_8x8.mtx"), to="Dense", memory_limit=64)

    def test_an_npz_over_the_memory_limit_is_a_memory_limit_error(self):
        # As a conversion's, a table's and an HDF5 read's: the same error for the same cause,
        # its message said once.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.npz")
            sp.save_npz(path, sp.random_array((200, 200), density=0.1, format="csr", rng=7), compressed=False)
            with self.assertRaisesRegex(sptk.MemoryLimitError, "memory limit") as e:
                sptk.read(path, memory_limit=2000)
            self.assertEqual(str(e.exception).count("memory limit"), 1, str(e.exception))


class Hdf5Test(unittest.TestCase):
    """libhdf5 runs in a helper process by default (this Python running sptk again)."""

    def test_over_the_memory_limit_is_a_memory_limit_error_in_and_out_of_process(self):
        # The same error as a conversion's, whether the helper or this process refused it.
        path = data("anndata", "adata_csr_f32.h5ad")
        for isolate in (True, False):
            with self.assertRaisesRegex(sptk.MemoryLimitError, "exceed the memory limit") as e:
                sptk.read(path, to="CSR", memory_limit=1000, isolate=isolate)
            self.assertIsInstance(e.exception, MemoryError)

    def test_isolated_read_matches_in_process(self):
        path = data("anndata", "adata_csr_f32.h5ad")
        in_process = sptk.read(path, isolate=False)
        # From the second read on, each read hands its request to a helper started ahead
        # during the one before (a spare): every one of them must be the same read.
        for _ in range(4):
            isolated = sptk.read(path)
            np.testing.assert_array_equal(isolated.to_numpy(), in_process.to_numpy())
            self.assertEqual(isolated.labels(1), in_process.labels(1))

    def test_tenx_features_are_gene_symbols_made_unique_or_ids(self):
        # A Cell Ranger v3 file whose symbols repeat, as real ones do (scanpy warns; anndata's
        # var_names_make_unique renames the later ones NAME-1, NAME-2, skipping taken names).
        import h5py

        names = ["TBCE", "A", "TBCE", "TBCE-1", "TBCE"]
        ids = ["ENSG%d" % i for i in range(5)]
        m = sp.random(5, 3, density=0.6, format="csc", random_state=4, dtype=np.float32)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.h5")
            with h5py.File(path, "w") as f:
                g = f.create_group("matrix")
                g["data"], g["indices"], g["indptr"] = m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)
                g["shape"] = np.array(m.shape, dtype=np.int32)
                g["barcodes"] = np.array([b"AAA-1", b"CCC-1", b"GGG-1"])
                g["features/id"] = np.array([i.encode() for i in ids])
                g["features/name"] = np.array([n.encode() for n in names])
            for isolate in (True, False):
                t = sptk.read(path, isolate=isolate)
                self.assertEqual(t.labels(0), ["TBCE", "A", "TBCE-2", "TBCE-1", "TBCE-3"])
                self.assertTrue(any("made unique" in n for n in t.notes), t.notes)
                self.assertEqual(sptk.read(path, isolate=isolate, feature_ids=True).labels(0), ids)
            np.testing.assert_array_equal(t.to_numpy(), m.toarray())

    def test_damaged_hdf5_raises_and_python_lives(self):
        path = data("anndata", "adata_csr_f32.h5ad")
        with open(path, "rb") as f:
            raw = f.read()
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.h5ad")
            failed = 0
            for at in range(96, min(len(raw), 8000), 661):
                damaged = bytearray(raw)
                damaged[at : at + 8] = b"\xff" * 8
                with open(bad, "wb") as f:
                    f.write(bytes(damaged))
                try:
                    sptk.read(bad, isolate_timeout=20)
                except sptk.Error:
                    failed += 1
            self.assertGreater(failed, 0)


class DocsTest(unittest.TestCase):
    def test_help_says_which_call_checks_what(self):
        self.assertIn("memory_limit", sptk.read.__doc__)
        self.assertIn("header and array directory", sptk.open.__doc__)
        self.assertIn("copy=True", sptk.Tensor.to_scipy.__doc__)
        stubs = os.path.join(os.path.dirname(sptk.__file__), "__init__.pyi")
        self.assertTrue(os.path.exists(stubs))


class GilTest(unittest.TestCase):
    def test_a_second_thread_runs_during_a_conversion(self):
        n = 3000
        rng = np.random.default_rng(1)
        m = sp.random_array((n, n), density=0.05, format="coo", rng=rng)
        t = sptk.from_scipy(m)
        def work():
            for _ in range(5):
                t.convert(to="CSC")
                t.convert(to="BSR:4x4")

        self.assertGreater(gil.ticks_during(work), 3)


if __name__ == "__main__":
    unittest.main()
