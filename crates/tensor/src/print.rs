//! The `sparse_tensor.print` text layout of MLIR, which `sparse-convert --print` writes.

use crate::index::IndexVec;
use crate::tensor::Tensor;

fn list(out: &mut String, items: impl Iterator<Item = String>) {
    out.push('(');
    for (i, s) in items.enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(&s);
    }
    // MLIR prints an empty array as `( )`, a full one as `( a, b )`.
    out.push_str(" )");
}

fn index_list(out: &mut String, a: &IndexVec) {
    list(out, a.iter().map(|x| x.to_string()));
}

impl Tensor {
    /// The storage in MLIR's `sparse_tensor.print` layout, ending with a newline.
    pub fn print_storage(&self) -> String {
        let mut out = String::new();
        out.push_str("---- Sparse Tensor ----\n");
        out.push_str(&format!("nse = {}\n", self.nse()));
        out.push_str("dim = ");
        list(&mut out, self.dim_sizes().iter().map(|x| x.to_string()));
        out.push_str("\nlvl = ");
        list(&mut out, self.lvl_sizes().iter().map(|x| x.to_string()));
        out.push('\n');
        for (name, arr) in self.index_arrays() {
            out.push_str(&name);
            out.push_str(" : ");
            index_list(&mut out, arr);
            out.push('\n');
        }
        out.push_str("values : ");
        let v = self.values();
        list(
            &mut out,
            (0..v.len()).map(|i| {
                let mut s = String::new();
                v.write_print(i, &mut s);
                s
            }),
        );
        out.push_str("\n----\n");
        out
    }
}
