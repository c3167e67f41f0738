"""sptk.spgemm / sptk.matmul / Tensor @ ... against SciPy and a dense NumPy reference."""

import unittest

import numpy as np
import scipy.sparse as sp

import sptk

import gil


def dense(t):
    return t.to_scipy().toarray()


def semiring_reference(a, b, semiring):
    """C's stored pattern and values by the definition: over the k where both store."""
    pa, pb = a != 0, b != 0
    m, n = a.shape[0], b.shape[1]
    stored = np.zeros((m, n), dtype=bool)
    out = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            ks = np.flatnonzero(pa[i] & pb[:, j])
            if len(ks) == 0:
                continue
            stored[i, j] = True
            x, y = a[i, ks], b[ks, j]
            out[i, j] = {
                "plus_times": lambda: np.sum(x * y),
                "plus_pair": lambda: len(ks),
                "min_plus": lambda: np.min(x + y),
                "max_times": lambda: np.max(x * y),
                "lor_land": lambda: 1,
            }[semiring]()
    return stored, out


class SpgemmTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(32)
        # Values away from zero: no product cancels, so SciPy's pattern is the structural one.
        pos = lambda size: rng.uniform(1, 9, size)
        self.a = sp.random_array((60, 40), density=0.1, format="csr", rng=rng, data_sampler=pos)
        self.b = sp.random_array((40, 50), density=0.1, format="csr", rng=rng, data_sampler=pos)
        self.m = sp.random_array((60, 50), density=0.3, format="csr", rng=rng)
        self.A, self.B, self.M = (sptk.from_scipy(x) for x in (self.a, self.b, self.m))

    def test_plus_times_is_scipys_product_bit_for_bit(self):
        want = (self.a @ self.b).tocsr()
        c = sptk.spgemm(self.A, self.B)
        self.assertIsInstance(c, sptk.Tensor)
        self.assertEqual(c.shape, (60, 50))
        self.assertEqual(c.nnz, want.nnz)
        # Both sum each entry in increasing k, so the bits agree, not only the values.
        np.testing.assert_array_equal(dense(c), want.toarray())
        np.testing.assert_array_equal(dense(sptk.matmul(self.A, self.B)), want.toarray())

    def test_the_operator(self):
        want = (self.a @ self.b).toarray()
        np.testing.assert_array_equal(dense(self.A @ self.B), want)
        np.testing.assert_array_equal(dense(self.A @ self.b), want)
        x = np.arange(40, dtype=np.float64)
        np.testing.assert_allclose(self.A @ x, self.a @ x)
        X = np.ones((40, 3))
        np.testing.assert_allclose(self.A @ X, self.a @ X)
        with self.assertRaises(TypeError):
            self.A @ "B"

    def test_transpose_b(self):
        bt = self.b.T.tocsr()  # 50 x 40
        c = sptk.spgemm(self.A, sptk.from_scipy(bt), transpose_b=True)
        np.testing.assert_array_equal(dense(c), (self.a @ self.b).toarray())

    def test_masks(self):
        full = (self.a @ self.b).toarray()
        keep = self.m.toarray() != 0
        c = sptk.spgemm(self.A, self.B, mask=self.M)
        np.testing.assert_array_equal(dense(c), np.where(keep, full, 0))
        self.assertEqual(c.nnz, int(((full != 0) & keep).sum()))
        c = sptk.spgemm(self.A, self.B, mask=self.m, complement=True)
        np.testing.assert_array_equal(dense(c), np.where(keep, 0, full))
        self.assertEqual(c.nnz, int(((full != 0) & ~keep).sum()))

    def test_every_semiring_against_the_definition(self):
        a, b = self.a.toarray(), self.b.toarray()
        for ring in ["plus_times", "plus_pair", "min_plus", "max_times", "lor_land"]:
            with self.subTest(semiring=ring):
                stored, want = semiring_reference(a, b, ring)
                c = sptk.spgemm(self.A, self.B, semiring=ring)
                self.assertEqual(c.nnz, int(stored.sum()))
                got = c.to_scipy()
                if ring == "plus_pair":
                    self.assertEqual(got.dtype, np.int64)
                if ring == "lor_land":
                    self.assertEqual(got.dtype, np.bool_)
                coo = got.tocoo()
                self.assertTrue(stored[coo.row, coo.col].all())
                np.testing.assert_allclose(coo.data.astype(np.float64), want[coo.row, coo.col], rtol=1e-12)

    def test_options(self):
        c = sptk.spgemm(self.A, self.B, to="DCSR", threads=1, pos_width=64)
        self.assertIn("compressed", c.encoding)
        self.assertEqual(c.pos(1).dtype, np.uint64)
        np.testing.assert_array_equal(dense(c.convert(to="CSR")), (self.a @ self.b).toarray())
        # A sum that cancels stays stored unless drop_zeros=True.
        a = sp.csr_array(np.array([[1.0, 1.0]]))
        b = sp.csr_array(np.array([[2.0], [-2.0]]))
        self.assertEqual(sptk.spgemm(a, b).nnz, 1)
        self.assertEqual(sptk.spgemm(a, b, drop_zeros=True).nnz, 0)

    def test_mistakes_raise(self):
        with self.assertRaises(sptk.ArgumentError):
            sptk.spgemm(self.A, self.A)  # 60 x 40 times 60 x 40
        with self.assertRaises(ValueError):
            sptk.spgemm(self.A, self.B, semiring="plus_min")
        with self.assertRaises(sptk.ArgumentError):
            sptk.spgemm(self.A, self.B, complement=True)
        with self.assertRaises(sptk.ArgumentError):
            sptk.spgemm(self.A, self.B, mask=self.A)  # M is 60 x 40, C 60 x 50
        with self.assertRaises(sptk.ArgumentError):
            sptk.spgemm(self.A, self.B, intersect=True)
        with self.assertRaises(sptk.ArgumentError):
            sptk.spgemm(self.A, sptk.from_scipy(self.b.astype(np.int32)))

    def test_a_second_thread_runs_during_a_product(self):
        rng = np.random.default_rng(7)
        big = sptk.from_scipy(sp.random_array((3000, 3000), density=0.01, format="csr", rng=rng))

        def work():
            for _ in range(3):
                sptk.spgemm(big, big, threads=1)

        self.assertGreater(gil.ticks_during(work), 0)


if __name__ == "__main__":
    unittest.main()
