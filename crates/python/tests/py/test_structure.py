"""sptk.tril / triu / offdiag / pattern / transpose / symmetrize against SciPy."""

import unittest

import numpy as np
import scipy.sparse as sp

import sptk


def dense(t):
    """The tensor as a dense NumPy array, through CSR (SciPy holds no DCSR)."""
    return t.convert(to="CSR").to_scipy().toarray()


class StructureTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(53)
        # A directed graph with weights, some self-loops and some edges both ways.
        a = sp.random_array((60, 60), density=0.1, format="csr", rng=rng, data_sampler=lambda size: rng.uniform(1, 9, size))
        self.a = (a + sp.diags_array(rng.uniform(1, 9, 60) * (rng.random(60) < 0.3))).tocsr()
        self.a.eliminate_zeros()
        self.A = sptk.from_scipy(self.a)

    def test_triangles_match_scipy_in_every_encoding(self):
        for to in ["CSR", "CSC", "DCSR", "COO", "BSR:2x2"]:
            A = sptk.from_scipy(self.a, to=to)
            for k in [0, -1, 2, -3]:
                with self.subTest(to=to, k=k):
                    L = sptk.tril(A, k)
                    self.assertEqual(L.encoding.split("posWidth")[0], A.encoding.split("posWidth")[0])
                    np.testing.assert_array_equal(dense(L), sp.tril(self.a, k).toarray())
                    np.testing.assert_array_equal(dense(sptk.triu(A, k)), sp.triu(self.a, k).toarray())
            no_loops = self.a.copy()
            no_loops.setdiag(0)
            no_loops.eliminate_zeros()
            np.testing.assert_array_equal(dense(sptk.offdiag(A)), no_loops.toarray())

    def test_pattern_transpose_and_symmetrize_match_scipy(self):
        a = self.a
        p = a.copy()
        p.data[:] = 1
        np.testing.assert_array_equal(dense(sptk.pattern(self.A)), p.toarray())
        np.testing.assert_array_equal(dense(sptk.transpose(self.A)), a.T.toarray())
        np.testing.assert_array_equal(dense(sptk.symmetrize(self.A)), (a + a.T).toarray())
        np.testing.assert_array_equal(dense(sptk.symmetrize(self.A, max=True)), a.maximum(a.T).toarray())
        # SciPy operands go in as they are; the result is shared with SciPy (32-bit).
        L = sptk.tril(a, -1).to_scipy()
        self.assertEqual(L.indices.dtype, np.int32)
        np.testing.assert_array_equal(L.toarray(), sp.tril(a, -1).toarray())

    def test_the_triangle_count_needs_no_scipy(self):
        # Triangles of the undirected graph: sum of (L L) masked by L, L = tril(pattern(A + A^T), -1).
        L = sptk.tril(sptk.pattern(sptk.symmetrize(self.A)), -1)
        c = sptk.spgemm(L, L, semiring="plus_pair", mask=L)
        u = ((self.a + self.a.T) != 0).astype(np.float64)
        l = sp.tril(u, -1).tocsr()
        want = (l @ l).multiply(l).sum()
        self.assertEqual(float(c.to_scipy().sum()), float(want))

    def test_refusals(self):
        with self.assertRaises(sptk.ArgumentError):
            sptk.symmetrize(sptk.from_scipy(sp.random_array((4, 5), density=0.5, format="csr")))
        with self.assertRaises(sptk.ArgumentError):
            sptk.tril(np.eye(3))


if __name__ == "__main__":
    unittest.main()
