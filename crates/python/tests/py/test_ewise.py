"""sptk.add / sub / mul / div / minimum / maximum / dot / rowdot / reduce against SciPy."""

import unittest

import numpy as np
import scipy.sparse as sp

import sptk

import gil


def _optional(test, name):
    """Imports an optional peer: skipped without it, unless CI asks for every peer
    (``SPTK_REQUIRE_PYTHON``)."""
    import importlib
    import os

    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("SPTK_REQUIRE_PYTHON"):
            raise
        test.skipTest("%s not installed" % name)


def dense(t):
    return t.to_scipy().toarray()


class EwiseTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(29)
        # Values away from zero, so that stored entries are the nonzeros on both sides.
        self.a = sp.random_array((120, 90), density=0.08, format="csr", rng=rng, data_sampler=lambda size: rng.uniform(1, 9, size))
        self.b = sp.random_array((120, 90), density=0.08, format="csr", rng=rng, data_sampler=lambda size: rng.uniform(-9, -1, size))
        self.A = sptk.from_scipy(self.a)
        self.B = sptk.from_scipy(self.b)

    def test_union_operations_match_scipy(self):
        a, b = self.a, self.b
        cases = [
            (sptk.add, a + b),
            (sptk.sub, a - b),
            (sptk.subtract, a - b),
            (sptk.minimum, a.minimum(b)),
            (sptk.maximum, a.maximum(b)),
        ]
        for f, want in cases:
            with self.subTest(op=f.__name__):
                c = f(self.A, self.B)
                self.assertIsInstance(c, sptk.Tensor)
                np.testing.assert_array_equal(dense(c), want.toarray())

    def test_intersection_operations_match_scipy(self):
        a, b = self.a.toarray(), self.b.toarray()
        both = (a != 0) & (b != 0)
        np.testing.assert_array_equal(dense(sptk.mul(self.A, self.B)), self.a.multiply(self.b).toarray())
        np.testing.assert_array_equal(dense(sptk.multiply(self.A, self.B)), self.a.multiply(self.b).toarray())
        with np.errstate(divide="ignore", invalid="ignore"):
            np.testing.assert_array_equal(dense(sptk.div(self.A, self.B)), np.where(both, a / b, 0))
        np.testing.assert_array_equal(dense(sptk.first(self.A, self.B)), np.where(both, a, 0))
        np.testing.assert_array_equal(dense(sptk.second(self.A, self.B)), np.where(both, b, 0))
        c = sptk.minimum(self.A, self.B, intersect=True)
        np.testing.assert_array_equal(dense(c), np.where(both, np.minimum(a, b), 0))

    def test_any_encodings_and_scipy_operands(self):
        want = (self.a + self.b).toarray()
        for ta, tb in [("CSC", "CSR"), ("DCSR", "COO"), ("BSR:2x2", "CSC")]:
            with self.subTest(a=ta, b=tb):
                c = sptk.add(self.A.convert(to=ta), self.B.convert(to=tb))
                np.testing.assert_array_equal(dense(c), want)
        # SciPy arrays are taken as they are (copied once).
        np.testing.assert_array_equal(dense(sptk.add(self.a, self.b.tocsc())), want)

    def test_options(self):
        c = sptk.add(self.A, self.B, to="COO")
        self.assertIn("singleton", c.encoding)
        c = sptk.add(self.A, self.B, pos_width=64, crd_width=32)
        self.assertEqual(c.pos(1).dtype, np.uint64)
        self.assertEqual(c.crd(1).dtype, np.uint32)
        zero = sptk.sub(self.A, self.A)
        self.assertEqual(zero.nnz, self.a.nnz)
        self.assertEqual(sptk.sub(self.A, self.A, drop_zeros=True).nnz, 0)
        with self.assertRaises(sptk.ArgumentError):
            sptk.add(self.A, self.B, intersect=True)
        with self.assertRaises(sptk.ArgumentError):
            sptk.add(self.A, self.B, colour="red")

    def test_dot_and_rowdot(self):
        p = self.a.multiply(self.b)
        self.assertAlmostEqual(float(sptk.dot(self.A, self.B)), float(p.sum()), places=10)
        np.testing.assert_allclose(sptk.rowdot(self.A, self.B), np.asarray(p.sum(axis=1)).ravel(), rtol=1e-12)
        # The same bits for every thread count.
        self.assertEqual(sptk.dot(self.A, self.B, threads=1), sptk.dot(self.A, self.B, threads=2))

    def test_reduce(self):
        a = self.a
        np.testing.assert_allclose(sptk.reduce(self.A, "sum", axis=1), np.asarray(a.sum(axis=1)).ravel(), rtol=1e-12)
        np.testing.assert_allclose(sptk.reduce(self.A, "sum", axis=0), np.asarray(a.sum(axis=0)).ravel(), rtol=1e-12)
        self.assertAlmostEqual(float(sptk.reduce(self.A)), float(a.sum()), places=9)
        counts = sptk.reduce(self.A, "count", axis="row")
        self.assertEqual(counts.dtype, np.int64)
        np.testing.assert_array_equal(counts, np.diff(a.indptr))
        # min / max over stored entries only: identity where a row stores nothing.
        got = sptk.reduce(self.A, "min", axis=1)
        for i in range(a.shape[0]):
            row = a.data[a.indptr[i] : a.indptr[i + 1]]
            self.assertEqual(got[i], row.min() if len(row) else np.inf)
        s = sptk.reduce(self.A, "max", axis=1, sparse=True)
        self.assertIsInstance(s, sptk.Tensor)
        self.assertEqual(s.nnz, int((np.diff(a.indptr) > 0).sum()))
        with self.assertRaises(sptk.ArgumentError):
            sptk.reduce(self.A, "sum", axis=2)

    def test_mismatches_raise(self):
        other = sptk.from_scipy(sp.random_array((5, 5), density=0.5, format="csr", rng=1))
        with self.assertRaises(sptk.ArgumentError):
            sptk.add(self.A, other)
        ints = sptk.from_scipy(self.a.astype(np.int32))
        with self.assertRaises(sptk.ArgumentError):
            sptk.add(self.A, ints)
        with self.assertRaises(sptk.ArgumentError):
            sptk.ewise("pow", self.A, self.B)

    def test_labelled_operands_meet_by_label(self):
        # One graph's edge list, its rows in two orders: relabelled, its nodes are
        # numbered differently, and they must still add up by node.
        pa = _optional(self, "pyarrow")
        src, dst = ["a", "b", "c", "d", "a"], ["b", "c", "d", "a", "c"]
        one = sptk.from_arrow(pa.table({"src": src, "dst": dst, "value": [1.0] * 5}))
        rev = sptk.from_arrow(pa.table({"src": src[::-1], "dst": dst[::-1], "value": [1.0] * 5}))
        self.assertNotEqual(one.labels(0), rev.labels(0))
        c = sptk.add(one, rev)
        self.assertEqual(c.nnz, 5)
        np.testing.assert_array_equal(c.values, [2.0] * 5)
        self.assertEqual(c.labels(0), one.labels(0))
        self.assertEqual(sptk.dot(one, rev), 5.0)
        self.assertGreater(sptk.add(one, rev, align="position").nnz, 5)
        with self.assertRaises(sptk.ArgumentError):
            sptk.add(one, rev, align="index")

    def test_a_second_thread_runs_during_an_operation(self):
        rng = np.random.default_rng(5)
        big = sp.random_array((4000, 4000), density=0.02, format="csr", rng=rng)
        A = sptk.from_scipy(big)
        B = sptk.from_scipy(big.T.tocsr())
        def work():
            for _ in range(5):
                sptk.add(A, B, threads=1)

        self.assertGreater(gil.ticks_during(work), 0)


if __name__ == "__main__":
    unittest.main()
