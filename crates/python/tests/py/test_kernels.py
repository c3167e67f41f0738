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

    def test_operands_are_real_floats_as_on_the_command_line(self):
        a = sptk.from_scipy(self.m)
        with self.assertRaisesRegex(sptk.ArgumentError, "x holds int64 elements; an operand must be a real float array"):
            sptk.spmv(a, np.arange(200))
        import ml_dtypes

        x16 = self.x.astype(ml_dtypes.bfloat16)
        np.testing.assert_allclose(sptk.spmv(a, x16), self.m @ x16.astype(np.float32), rtol=1e-5)
        np.testing.assert_allclose(sptk.spmv(a, self.x.astype(np.float16)), self.m @ self.x, rtol=2e-3)

    @unittest.skipUnless(__import__("platform").machine() == "x86_64", "the generated bf16 kernels are x86's")
    def test_bf16_products_run_as_stored_and_compile_once(self):
        # The kernel widens bf16 values as it loads them (as sparse-run runs it): no f32
        # copy of A per call, and one kernel per description for the process.
        import ml_dtypes

        rng = np.random.default_rng(11)
        w = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
        x = rng.standard_normal(256).astype(np.float32)
        for to in ("2:4", "CSR"):
            with self.subTest(to=to):
                a = sptk.from_numpy(w, to=to, prune=to == "2:4")
                expected = sptk.spmv(a.convert(dtype="f32"), x)
                made, copies = sptk._sptk.kernel_counts()
                first = sptk.spmv(a, x)
                after_first = sptk._sptk.kernel_counts()
                again = sptk.spmv(a, x)
                self.assertEqual(sptk._sptk.kernel_counts(), after_first)
                self.assertEqual(after_first[1], copies)
                self.assertLessEqual(after_first[0] - made, 1)
                np.testing.assert_array_equal(first, again)
                np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-5)


class LabelledOperandTest(unittest.TestCase):
    """A pandas x meets A by label, as pandas' own df.dot(s) aligns."""

    def setUp(self):
        import pandas as pd
        import pyarrow as pa

        self.pd = pd
        # Edges a->b (2), b->c (3), c->a (5): nodes a, b, c numbered 0, 1, 2.
        table = pa.table({"src": ["a", "b", "c"], "dst": ["b", "c", "a"], "value": [2.0, 3.0, 5.0]})
        self.a = sptk.from_arrow(table, to="CSR")
        self.assertEqual(self.a.labels(1), ["a", "b", "c"])

    def test_series_is_aligned_and_the_result_labelled(self):
        pd = self.pd
        x = pd.Series([100.0, 10.0, 1.0, 7.0], index=["c", "b", "a", "unused"])
        y = sptk.spmv(self.a, x)
        # a: 2 * x[b] = 20; b: 3 * x[c] = 300; c: 5 * x[a] = 5.
        self.assertIsInstance(y, pd.Series)
        self.assertEqual(list(y.index), ["a", "b", "c"])
        np.testing.assert_array_equal(y.to_numpy(), [20.0, 300.0, 5.0])
        yt = sptk.spmv(self.a, pd.Series([1.0, 2.0, 4.0], index=["a", "b", "c"]), transpose=True)
        # A^T: a: 5 * x[c] = 20; b: 2 * x[a] = 2; c: 3 * x[b] = 6.
        np.testing.assert_array_equal(yt.loc[["a", "b", "c"]].to_numpy(), [20.0, 2.0, 6.0])
        X = pd.DataFrame({"p": [1.0, 2.0, 4.0], "q": [0.0, 1.0, 0.0]}, index=["a", "b", "c"])
        Y = sptk.spmm(self.a, X.iloc[::-1])
        self.assertEqual(list(Y.columns), ["p", "q"])
        np.testing.assert_array_equal(Y.loc["a"].to_numpy(), [4.0, 2.0])

    def test_missing_labels_and_unlabelled_dimensions_refuse(self):
        pd = self.pd
        with self.assertRaisesRegex(sptk.ArgumentError, r"1 labels of A's dimension 1 are not in its index \('c'\)"):
            sptk.spmv(self.a, pd.Series([1.0, 2.0], index=["a", "b"]))
        plain = sptk.from_scipy(sp.csr_array(np.eye(3)))
        np.testing.assert_array_equal(sptk.spmv(plain, pd.Series([1.0, 2.0, 3.0])).to_numpy(), [1.0, 2.0, 3.0])
        with self.assertRaisesRegex(sptk.ArgumentError, "has none to meet them"):
            sptk.spmv(plain, pd.Series([1.0, 2.0, 3.0], index=["a", "b", "c"]))


if __name__ == "__main__":
    unittest.main()
