"""sptk.spmv / sptk.spmm against SciPy."""

import unittest

import numpy as np
import scipy.sparse as sp

import sptk


class KernelTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.m = sp.random_array((300, 200), density=0.05, format="csr", rng=rng)
        self.x = rng.random(200)
        self.X = rng.random((200, 5))

    def test_spmv_every_format(self):
        expected = self.m @ self.x
        for to in ["CSR", "CSC", "COO", "BSR:4x4", "DCSR", "ELL"]:
            with self.subTest(to=to):
                a = sptk.from_scipy(self.m, to=to)
                np.testing.assert_allclose(sptk.spmv(a, self.x), expected, rtol=1e-12)

    def test_spmv_transpose_alpha_beta(self):
        a = sptk.from_scipy(self.m)
        y0 = np.ones(200)
        got = sptk.spmv(a, np.ones(300), y=y0, alpha=2.0, beta=3.0, transpose=True)
        np.testing.assert_allclose(got, 2.0 * (self.m.T @ np.ones(300)) + 3.0, rtol=1e-12)
        self.assertTrue(got.flags.writeable)

    def test_spmm_and_f32(self):
        a = sptk.from_scipy(self.m)
        np.testing.assert_allclose(sptk.spmm(a, self.X), self.m @ self.X, rtol=1e-12)
        a32 = a.convert(dtype="f32")
        y = sptk.spmv(a32, self.x.astype(np.float32))
        self.assertEqual(y.dtype, np.float32)
        np.testing.assert_allclose(y, self.m @ self.x, rtol=1e-4)

    def test_wrong_length_raises(self):
        a = sptk.from_scipy(self.m)
        with self.assertRaises(ValueError):
            sptk.spmv(a, np.ones(7))


if __name__ == "__main__":
    unittest.main()
