"""sptk.from_scipy / from_numpy / from_arrow."""

import os
import unittest

import numpy as np
import scipy.sparse as sp

import sptk


class FromScipyTest(unittest.TestCase):
    def test_each_format_round_trips(self):
        rng = np.random.default_rng(7)
        m = sp.random_array((40, 30), density=0.2, format="csr", rng=rng)
        for fmt in ["csr", "csc", "coo", "bsr", "lil", "dia"]:
            with self.subTest(fmt=fmt):
                a = m.asformat(fmt) if fmt != "bsr" else m.tobsr(blocksize=(2, 3))
                t = sptk.from_scipy(a)
                np.testing.assert_array_equal(t.to_scipy().toarray(), m.toarray())

    def test_unsorted_and_duplicates_are_summed(self):
        indptr = np.array([0, 3, 3], dtype=np.int32)
        indices = np.array([2, 0, 2], dtype=np.int32)
        data = np.array([1.0, 2.0, 3.0])
        m = sp.csr_array((data, indices, indptr), shape=(2, 3))
        t = sptk.from_scipy(m)
        np.testing.assert_array_equal(t.to_numpy(), [[2.0, 0.0, 4.0], [0.0, 0.0, 0.0]])

    def test_bad_arrays_raise(self):
        m = sp.csr_array((np.array([1.0]), np.array([5], dtype=np.int32), np.array([0, 1], dtype=np.int32)), shape=(1, 3))
        with self.assertRaises(sptk.FormatError):
            sptk.from_scipy(m)
        m = sp.csr_array((np.array([1.0]), np.array([-1], dtype=np.int32), np.array([0, 1], dtype=np.int32)), shape=(1, 3))
        with self.assertRaises(ValueError):
            sptk.from_scipy(m)

    def test_to_another_encoding(self):
        m = sp.random_array((16, 16), density=0.3, format="csr", rng=np.random.default_rng(2))
        t = sptk.from_scipy(m, to="CSC")
        self.assertEqual(t.to_scipy().format, "csc")


class FromNumpyTest(unittest.TestCase):
    def test_dense_round_trip_and_2_4_prune(self):
        w = np.arange(1, 33, dtype=np.float32).reshape(4, 8)
        t = sptk.from_numpy(w, to="2:4", prune=True)
        self.assertEqual(t.nnz, 16)
        kept = t.convert(to="CSR").to_numpy()
        self.assertEqual(np.count_nonzero(kept), 16)
        np.testing.assert_array_equal(sptk.from_numpy(w).to_numpy(), w)

    def test_fortran_and_big_endian(self):
        a = np.asfortranarray(np.array([[0, 1.5], [2.5, 0]]).astype(">f8"))
        np.testing.assert_array_equal(sptk.from_numpy(a).to_numpy(), a)


class HalfValuesTest(unittest.TestCase):
    """bf16 and f16 values keep their bits: ml_dtypes arrays as they are, uint16 views only
    with bits=True, and the guess between the two refused."""

    def setUp(self):
        import ml_dtypes

        self.bf16 = ml_dtypes.bfloat16
        # 48171 is 0xBC2B: -0.010437011... as bf16; converted as a number it is 48128.0.
        self.bits = np.array([[0, 48171, 0, 16320], [16256, 0, 0, 0]], dtype=np.uint16)

    def test_ml_dtypes_bfloat16_is_bf16(self):
        w = self.bits.view(self.bf16)
        t = sptk.from_numpy(w)
        self.assertEqual(t.value_type, "bf16")
        self.assertEqual(t.dtype, np.dtype(self.bf16))
        self.assertEqual(t.values.dtype, np.dtype(self.bf16))
        np.testing.assert_array_equal(t.values.view(np.uint16), [48171, 16320, 16256])
        np.testing.assert_array_equal(t.to_numpy().astype(np.float32), w.astype(np.float32))
        rows = t.rows(0, 1)
        self.assertEqual(rows.values.dtype, np.dtype(self.bf16))

    def test_uint16_bits_taken_only_when_asked(self):
        with self.assertRaisesRegex(sptk.ArgumentError, "bits=True"):
            sptk.from_numpy(self.bits, dtype="bf16")
        t = sptk.from_numpy(self.bits, dtype="bf16", bits=True)
        self.assertEqual(t.value_type, "bf16")
        np.testing.assert_array_equal(t.values.view(np.uint16), [48171, 16320, 16256])
        numbers = sptk.from_numpy(self.bits, dtype="bf16", bits=False)
        self.assertEqual(float(numbers.values[0]), 48128.0)
        f16 = sptk.from_numpy(self.bits, dtype="f16", bits=True)
        np.testing.assert_array_equal(f16.values, self.bits[self.bits != 0].view(np.float16))

    def test_bits_refused_where_they_mean_nothing(self):
        with self.assertRaisesRegex(sptk.ArgumentError, "say which"):
            sptk.from_numpy(self.bits, bits=True)
        with self.assertRaisesRegex(sptk.ArgumentError, "2-byte integers"):
            sptk.from_numpy(self.bits.astype(np.uint32), dtype="bf16", bits=True)
        with self.assertRaisesRegex(sptk.ArgumentError, "float8_e4m3fn"):
            import ml_dtypes

            sptk.from_numpy(np.ones(4, dtype=ml_dtypes.float8_e4m3fn))
        with self.assertRaisesRegex(sptk.ArgumentError, "V2"):
            sptk.from_numpy(self.bits.view("V2"))

    def test_float16_and_scipy_uint16_data(self):
        h = np.array([[0, 1.5], [-2.25, 0]], dtype=np.float16)
        t = sptk.from_numpy(h)
        self.assertEqual((t.value_type, t.dtype), ("f16", np.dtype(np.float16)))
        m = sp.csr_array(self.bits)
        with self.assertRaisesRegex(sptk.ArgumentError, "bits=True"):
            sptk.from_scipy(m, dtype="bf16")
        t = sptk.from_scipy(m, dtype="bf16", bits=True)
        np.testing.assert_array_equal(t.values.view(np.uint16), [48171, 16320, 16256])
        with self.assertRaisesRegex(sptk.ArgumentError, "SciPy has no bf16"):
            t.to_scipy()


class DefaultTargetTest(unittest.TestCase):
    """Leaving `to` out makes a matrix without an encoding of its own into the CSR preset,
    widths included (the narrowest that hold the data), as `to="CSR"` does; a matrix with
    one (SciPy's CSR) keeps it, widths included."""

    def test_dense_and_coordinates_take_widths_scipy_shares(self):
        # A preset's unsaid widths are at least 32 bits here (SciPy indexes with int32 or
        # int64, and a narrower array would be copied on the way); asked, the narrowest.
        w = np.arange(12.0).reshape(3, 4)
        self.assertEqual(sptk.from_numpy(w).encoding, sptk.from_numpy(w, to="CSR").encoding)
        self.assertEqual(sptk.from_numpy(w).pos(1).dtype, np.uint32)
        self.assertEqual(sptk.from_numpy(w, crd_width="auto", pos_width="auto").pos(1).dtype, np.uint8)
        coo = sp.coo_array(w)
        self.assertEqual(sptk.from_scipy(coo).crd(1).dtype, np.uint32)
        t = sptk.from_numpy(w)
        m = t.to_scipy()
        self.assertTrue(np.shares_memory(m.indices, t.crd(1)))
        self.assertTrue(np.shares_memory(m.indptr, t.pos(1)))

    def test_an_h5ad_read_reaches_scipy_without_a_copy(self):
        t = sptk.read(os.path.join(os.environ["SPTK_TESTDATA"], "anndata", "adata_csr_f32.h5ad"), to="CSR")
        m = t.to_scipy()
        self.assertTrue(np.shares_memory(m.indices, t.crd(1)))
        self.assertTrue(np.shares_memory(m.data, t.values))

    def test_a_stored_encoding_keeps_its_widths(self):
        m = sp.csr_array(np.eye(3))
        m.indices = m.indices.astype(np.int64)
        m.indptr = m.indptr.astype(np.int64)
        self.assertEqual(sptk.from_scipy(m).crd(1).dtype, np.uint64)


class FromArrowTest(unittest.TestCase):
    def setUp(self):
        self.pa = _optional(self, "pyarrow")

    def test_table_and_reader(self):
        pa = self.pa
        table = pa.table({"row": pa.array([0, 2, 1], pa.int64()), "col": pa.array([1, 0, 2], pa.int32()), "value": [1.0, 2.0, 3.0]})
        expected = np.array([[0, 1.0, 0], [0, 0, 3.0], [2.0, 0, 0]])
        np.testing.assert_array_equal(sptk.from_arrow(table, to="CSR").to_numpy(), expected)
        self.assertEqual(sptk.from_arrow(table).encoding, sptk.from_arrow(table, to="CSR").encoding)
        reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1))
        np.testing.assert_array_equal(sptk.from_arrow(reader).to_numpy(), expected)

    def test_text_ids_relabelled(self):
        pa = self.pa
        table = pa.table({"src": ["a", "b", "c"], "dst": ["b", "c", "a"]})
        t = sptk.from_arrow(table, to="CSR")
        self.assertEqual(t.shape, (3, 3))
        self.assertEqual(t.labels(0), ["a", "b", "c"])

    def test_labels_given_keep_an_earlier_numbering(self):
        pa = self.pa
        week1 = sptk.from_arrow(pa.table({"src": ["a", "b"], "dst": ["b", "c"]}), to="CSR")
        self.assertEqual(week1.labels(0), ["a", "b", "c"])
        week2 = pa.table({"src": ["d", "c"], "dst": ["a", "b"]})
        # Alone: d 0, a 1, c 2, b 3. From week 1's list: a 0, b 1, c 2 as there, d 3.
        self.assertEqual(sptk.from_arrow(week2, to="CSR").labels(0), ["d", "a", "c", "b"])
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w1.spt")
            week1.write(path)
            for given in (week1, path, [["a", "b", "c"], None]):
                t = sptk.from_arrow(week2, to="CSR", labels=given)
                self.assertEqual(t.labels(0), ["a", "b", "c", "d"])
                self.assertEqual(t.labels(1), ["a", "b", "c", "d"])
                dense = np.zeros((4, 4))
                dense[3, 0] = dense[2, 1] = 1.0
                np.testing.assert_array_equal(t.to_numpy(), dense)
            self.assertTrue(any("1 new id numbered after them" in n for n in t.notes), t.notes)
            with self.assertRaisesRegex(sptk.ArgumentError, "labels="):
                sptk.from_arrow(week2, labels=3)
            with self.assertRaisesRegex(sptk.FormatError, "name `a` twice"):
                sptk.from_arrow(week2, labels=[["a", "b", "a"], None])
            with self.assertRaisesRegex(sptk.Error, "are for tables"):
                sptk.read(path, labels=week1)

    def test_a_table_over_the_memory_limit_is_a_memory_limit_error(self):
        # As a conversion's and an HDF5 read's: the same error for the same cause.
        pa = self.pa
        n = 10_000
        table = pa.table({"row": np.arange(n), "col": np.arange(n), "value": np.ones(n)})
        for to in ("CSR", "COO"):
            with self.assertRaisesRegex(sptk.MemoryLimitError, "memory limit"):
                sptk.from_arrow(table, to=to, memory_limit=50_000)

    def test_to_arrow_round_trip(self):
        pa = self.pa
        t = sptk.from_numpy(np.array([[0, 1.5], [2.5, 0]]))
        table = t.to_arrow()
        self.assertTrue(hasattr(table, "__arrow_c_stream__"))
        np.testing.assert_array_equal(sptk.from_arrow(table).to_numpy(), t.to_numpy())

    def test_not_a_table(self):
        with self.assertRaises(sptk.ArgumentError):
            sptk.from_arrow([1, 2, 3])

    def test_large_table_equals_scipy(self):
        # One batch larger than a part (cut and read in parallel), duplicates summed, the
        # shape from the largest coordinates; the same in batches of a reader.
        pa = self.pa
        rng = np.random.default_rng(5)
        n = 700_000
        r = rng.integers(0, 3000, n)
        c = rng.integers(0, 800, n)
        v = rng.standard_normal(n)
        table = pa.table({"row": r, "col": c, "value": v})
        expected = sp.coo_array((v, (r, c))).tocsr()
        for source in (table, pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=100_000))):
            got = sptk.from_arrow(source, to="CSR").to_scipy()
            self.assertEqual(got.shape, expected.shape)
            np.testing.assert_array_equal(got.indptr, expected.indptr)
            np.testing.assert_array_equal(got.indices, expected.indices)
            np.testing.assert_allclose(got.data, expected.data, rtol=1e-12)
        t = sptk.from_arrow(table, to="CSR", shape=[5000, 1000])
        self.assertEqual(t.shape, (5000, 1000))

    def test_bad_coordinates_raise_with_column_and_row(self):
        pa = self.pa
        nulls = pa.table({"row": pa.array([0, None, 2], pa.int64()), "col": [0, 1, 2], "value": [1.0, 2.0, 3.0]})
        with self.assertRaisesRegex(sptk.FormatError, r"column `row`, row 1: null value"):
            sptk.from_arrow(nulls, to="CSR")
        negative = pa.table({"row": [0, 1, 2], "col": [0, -1, 2], "value": [1.0, 2.0, 3.0]})
        with self.assertRaisesRegex(sptk.FormatError, r"column `col`, row 1: negative coordinate -1"):
            sptk.from_arrow(negative, to="CSR")
        past = pa.table({"row": [0, 1, 9], "col": [0, 1, 2], "value": [1.0, 2.0, 3.0]})
        with self.assertRaisesRegex(sptk.FormatError, r"past the dimension size 5"):
            sptk.from_arrow(past, to="CSR", shape=[5, 5])


def _optional(test, name):
    """Imports an optional peer: skipped without it, unless CI asks for every peer
    (``SPTK_REQUIRE_PYTHON``, as ``.ci/run`` sets it with the pins installed)."""
    import importlib
    import os

    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("SPTK_REQUIRE_PYTHON"):
            raise
        test.skipTest("%s not installed" % name)


class PolarsDuckdbTest(unittest.TestCase):
    expected = np.array([[0, 1.0, 0], [2.0, 0, 0], [0, 0, 3.0]])

    def test_polars(self):
        pl = _optional(self, "polars")
        df = pl.DataFrame({"row": [0, 1, 2], "col": [1, 0, 2], "value": [1.0, 2.0, 3.0]})
        np.testing.assert_array_equal(sptk.from_arrow(df).to_numpy(), self.expected)
        # Text ids, relabelled by first appearance, kept as labels.
        edges = pl.DataFrame({"src": ["x", "y"], "dst": ["y", "z"]})
        t = sptk.from_arrow(edges, to="CSR")
        self.assertEqual(t.labels(0), ["x", "y", "z"])

    def test_duckdb(self):
        duckdb = _optional(self, "duckdb")
        con = duckdb.connect()
        rel = con.sql("select i, j, v::double as v from (values (0, 1, 1.0), (1, 0, 2.0), (2, 2, 3.0)) t(i, j, v)")
        t = sptk.from_arrow(rel, columns=["i", "j"], value_column="v", to="CSR")
        np.testing.assert_array_equal(t.to_numpy(), self.expected)
        self.assertEqual(t.shape, (3, 3))


if __name__ == "__main__":
    unittest.main()
