//! MLIR's own verifier cases, transcribed from llvm-project
//! `mlir/test/Dialect/SparseTensor/roundtrip_encoding.mlir` (accept, exact canonical print) and
//! `mlir/test/Dialect/SparseTensor/invalid_encoding.mlir` (reject). Exceptions are marked
//! `EXCEPTION` with the ENCODING.md section that makes them.

use crate::canon;
use sptk_encoding::parse;

fn wrap(body: &str) -> String {
    format!("#sparse_tensor.encoding<{{ {body} }}>")
}

/// (input body, canonical print).
const ROUNDTRIP: &[(&str, &str)] = &[
    ("map = (d0) -> (d0 : compressed)", "map = (d0) -> (d0 : compressed)"),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed),\n  posWidth = 64,\n  crdWidth = 64",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1.0 : f32, implicitVal = 0.0 : f32",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1.000000e+00 : f32, implicitVal = 0.000000e+00 : f32",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), explicitVal = 1.0 : f64, implicitVal = 0.0 : f64",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), explicitVal = 1.000000e+00 : f64, implicitVal = 0.000000e+00 : f64",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1 : i32, implicitVal = 0 : i32",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1 : i32, implicitVal = 0 : i32",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1 : i64, implicitVal = 0 : i64",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = 1 : i64, implicitVal = 0 : i64",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = #complex.number<:f32 1.0, 0.0>, implicitVal = #complex.number<:f32 0.0, 0.0>",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 64, crdWidth = 64, explicitVal = #complex.number<:f32 1.000000e+00, 0.000000e+00> : complex<f32>, implicitVal = #complex.number<:f32 0.000000e+00, 0.000000e+00> : complex<f32>",
    ),
    (
        "map = (d0, d1, d2) -> (d0 : batch, d1: dense, d2 : compressed),\n",
        "map = (d0, d1, d2) -> (d0 : batch, d1 : dense, d2 : compressed)",
    ),
    (
        "map = {l0, l1} (d0 = l0, d1 = l1) -> (l0 = d0 : dense, l1 = d1 : compressed)",
        "map = (d0, d1) -> (d0 : dense, d1 : compressed)",
    ),
    (
        "map = (d0, d1) -> (d1 : dense, d0 : compressed), posWidth = 0, crdWidth = 0",
        "map = (d0, d1) -> (d1 : dense, d0 : compressed)",
    ),
    (
        "map = (d0, d1) -> (d1 : compressed, d0 : compressed), posWidth = 0, crdWidth = 64",
        "map = (d0, d1) -> (d1 : compressed, d0 : compressed), crdWidth = 64",
    ),
    (
        "map = (d0, d1) -> (d0 : compressed(nonunique, nonordered), d1 : singleton(nonordered))",
        "map = (d0, d1) -> (d0 : compressed(nonunique, nonordered), d1 : singleton(nonordered))",
    ),
    (
        "map = (d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton, d2: dense)",
        "map = (d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton, d2 : dense)",
    ),
    (
        "map = (d0, d1, d2) -> (d0 : dense, d1 : loose_compressed(nonunique), d2 : singleton)",
        "map = (d0, d1, d2) -> (d0 : dense, d1 : loose_compressed(nonunique), d2 : singleton)",
    ),
    (
        "map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)",
        "map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)",
    ),
    (
        "map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton(soa))",
        "map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton(soa))",
    ),
    (
        "map = ( i, j ) ->\n      ( i floordiv 2 : dense,\n        j floordiv 3 : compressed,\n        i mod 2      : dense,\n        j mod 3      : dense\n      )",
        "map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, d0 mod 2 : dense, d1 mod 3 : dense)",
    ),
    // EXCEPTION (ENCODING.md, "ELL"): current MLIR prints `(d0 * s0) * 4`; our canonical text
    // keeps `d0 * (s0 * 4)`, as older MLIR printed it.
    (
        "map = [s0](d0, d1) -> (d0 * (s0 * 4) : dense, d0 : dense, d1 : compressed)",
        "map = [s0](d0, d1) -> (d0 * (s0 * 4) : dense, d0 : dense, d1 : compressed)",
    ),
    (
        "map = (d0 : #sparse_tensor<slice(1, 4, 1)>, d1 : #sparse_tensor<slice(1, 4, 2)>) -> (d0 : dense, d1 : compressed)",
        "map = (d0 : #sparse_tensor<slice(1, 4, 1)>, d1 : #sparse_tensor<slice(1, 4, 2)>) -> (d0 : dense, d1 : compressed)",
    ),
    (
        "map = (d0 : #sparse_tensor<slice(1, ?, 1)>, d1 : #sparse_tensor<slice(?, 4, 2)>) -> (d0 : dense, d1 : compressed)",
        "map = (d0 : #sparse_tensor<slice(1, ?, 1)>, d1 : #sparse_tensor<slice(?, 4, 2)>) -> (d0 : dense, d1 : compressed)",
    ),
    (
        "map = ( i, j, k ) ->\n  ( i floordiv 2 : dense,\n    j floordiv 3 : dense,\n    k floordiv 4 : compressed,\n    i mod 2      : dense,\n    j mod 3      : dense,\n    k mod 4      : dense\n  )",
        "map = (d0, d1, d2) -> (d0 floordiv 2 : dense, d1 floordiv 3 : dense, d2 floordiv 4 : compressed, d0 mod 2 : dense, d1 mod 3 : dense, d2 mod 4 : dense)",
    ),
    (
        "map =\n  {il, jl, ii, jj}\n  ( i = il * 2 + ii,\n    j = jl * 3 + jj\n  ) ->\n  ( il = i floordiv 2 : dense,\n    jl = j floordiv 3 : compressed,\n    ii = i mod 2      : dense,\n    jj = j mod 3      : dense\n  )",
        "map = (d0, d1) -> (d0 floordiv 2 : dense, d1 floordiv 3 : compressed, d0 mod 2 : dense, d1 mod 3 : dense)",
    ),
    (
        "map = ( i, j ) ->\n  ( i            : dense,\n    j floordiv 4 : dense,\n    j mod 4      : structured[2, 4]\n  ),\n  crdWidth = 8  // we would even like just 2-bits",
        "map = (d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4]), crdWidth = 8",
    ),
    (
        "map = ( i, j, k ) -> ( i : dense, j : dense, k floordiv 4 : dense, k mod 4 : structured[2, 4] )",
        "map = (d0, d1, d2) -> (d0 : dense, d1 : dense, d2 floordiv 4 : dense, d2 mod 4 : structured[2, 4])",
    ),
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 4 : dense, j : dense, k mod 4 : structured[2, 4] )",
        "map = (d0, d1, d2) -> (d0 : dense, d2 floordiv 4 : dense, d1 : dense, d2 mod 4 : structured[2, 4])",
    ),
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 8 : dense, j : dense, k mod 8 : structured[5, 8] )",
        "map = (d0, d1, d2) -> (d0 : dense, d2 floordiv 8 : dense, d1 : dense, d2 mod 8 : structured[5, 8])",
    ),
    // From the older revision of the file: `block2_4` is the older name of structured[2, 4].
    (
        "map = ( i, j ) -> ( i : dense, j floordiv 4 : dense, j mod 4 : block2_4 )",
        "map = (d0, d1) -> (d0 : dense, d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4])",
    ),
];

#[test]
fn mlir_roundtrip_encoding() {
    for (input, want) in ROUNDTRIP {
        // The input may end in a `//` comment, so the closing `}>` goes on its own line.
        let printed = canon(&format!("#sparse_tensor.encoding<{{ {input}\n}}>"));
        assert_eq!(printed, wrap(want), "input: {input}");
        assert_eq!(canon(&printed), printed, "reprint of {input}");
    }
}

/// (input body, a fragment of our error message). MLIR's message is in the comment when ours
/// is worded differently.
const INVALID: &[(&str, &str)] = &[
    ("map = []", "expected `(` opening the dimension list, found `}`"),
    ("map = ()", "expected `->` after the dimension list"),
    ("map = (d0 -> d0)", "expected `,` or `)` in the dimension list, found `->`"),
    ("map = d0 -> d0", "expected `(` opening the dimension list, found `d0`"),
    ("map = (d0) -> d0", "expected `(` opening the level list"),
    ("map = (d0) -> (d0)", "expected `:` and a level format after the level expression, found `)`"),
    ("map = (d0) -> (d0:)", "expected a level format"),
    ("map = (d0) -> (d0 : (compressed))", "expected a level format"),
    // "Batch lvlType can only be leading levels"
    ("map = (d0, d1, d2) -> (d0 : batch, d1 : compressed, d2: batch)", "level 2: batch levels must all come first"),
    ("map = (d0) -> (d0 : dense, d1 : compressed)", "use of undeclared identifier `d1`"),
    // "failed to infer lvlToDim from dimToLvl"
    ("map = (d0, d1) -> (d0 : dense)", "dimension 1 (d1) does not appear in the level map"),
    // "expected bare identifier"
    ("map = (1)", "expected a dimension name, found `1`"),
    ("nap = (d0) -> (d0 : dense)", "unknown field `nap`"),
    ("map =  -> (d0 : dense)", "expected `(` opening the dimension list, found `->`"),
    ("map = (d0) -> (d0 : strange)", "unknown level format `strange`"),
    ("map = (d0) -> (d0 : \"wrong\")", "expected a level format (dense, compressed, singleton, ...), found \"wrong\""),
    ("map = (d0) -> (d0 : compressed(\"wrong\"))", "expected a level property"),
    ("map = (d0) -> (d0 : compressed[high])", "expected `,` or `)` in the level list, found `[`"),
    ("map = (d0) -> (d0 : compressed(wrong))", "unknown level property `wrong`"),
    ("map = (d0) -> (d0 : compressed, dense)", "use of undeclared identifier `dense`"),
    // "failed to infer lvlToDim from dimToLvl"
    ("map = (d0, d1) -> (d0 : dense, d0 : compressed)", "level 1: dimension d0 is already level 0"),
    ("map = (d0, d1) -> (d0 : compressed; d1 : dense)", "unexpected character ';'"),
    ("map = (d0: d1) -> (d0 : compressed, d1 : dense)", "expected `#sparse_tensor<slice(offset, size, stride)>`"),
    ("map = (d0, d1) -> (d0 = compressed, d1 = dense)", "expected `:` and a level format"),
    ("map = (d0 : compressed, d1 : compressed)", "expected `#sparse_tensor<slice(offset, size, stride)>`"),
    ("map = (d0 = compressed, d1 = compressed)", "use of undeclared identifier `compressed`"),
    ("map = (d0 = l0, d1 = l1) {l0, l1} -> (l0 = d0 : dense, l1 = d1 : compressed)", "use of undeclared identifier `l0`"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (l0 : d0 = dense, l1 : d1 = compressed)", "expected `=` after the level variable"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (d0 : l0 = dense, d1 : l1 = compressed)", "use of undeclared identifier `d0`"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (d0 : dense, d1 : compressed)", "use of undeclared identifier `d0`"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (l0 : dense, l1 : compressed)", "expected `=` after the level variable"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (l0 = dense, l1 = compressed)", "use of undeclared identifier `dense`"),
    ("map = {l0, l1} (d0 = l0, d1 = l1) -> (d0 = l0 : dense, d1 = l1 : compressed)", "use of undeclared identifier `d0`"),
    ("posWidth = \"x\"", "expected an integral bit width for posWidth"),
    // EXCEPTION: MLIR accepts an encoding without `map`; ours needs one, so a map is added.
    ("map = (d0) -> (d0 : dense), posWidth = 42", "posWidth = 42 is not a supported bit width"),
    ("crdWidth = \"not really\"", "expected an integral bit width for crdWidth"),
    ("map = (d0) -> (d0 : dense), crdWidth = 128", "crdWidth = 128 is not a supported bit width"),
    ("key = 1", "unknown field `key`"),
    // "expect positive value or ? for slice offset/size/stride"
    (
        "map = (d0 : #sparse_tensor<slice(-1, ?, 1)>, d1 : #sparse_tensor<slice(?, 4, 2)>) -> (d0 : dense, d1 : compressed)",
        "expected a non-negative integer or `?`",
    ),
    // "Level-rank mismatch between forward-declarations and specifiers"
    ("map = {l0, l1, l2} (d0, d1) -> (l0 = d0 : dense, l1 = d1 : compressed)", "3 level variables are declared but 2 levels are given"),
    // "expected all singleton lvlTypes stored in the same memory layout (SoA vs AoS)."
    (
        "map = (d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton(soa, nonunique), d2 : singleton)",
        "level 2: either every singleton level has soa or none has (level 1 has soa, level 2 does not)",
    ),
    // "SoA is only applicable to singleton lvlTypes."
    (
        "map = (d0, d1) -> (d0 : compressed(nonunique, soa), d1 : singleton(soa))",
        "level 0: soa applies only to singleton levels; level 0 is compressed(nonunique, soa)",
    ),
    ("map = {l0} (d0, d1) -> (l0 = d0 : dense, l1 = d1 : compressed)", "use of undeclared identifier `l1`"),
    // "Level-variable ordering mismatch."
    ("map = {l1, l0} (d0, d1) -> (l0 = d0 : dense, l1 = d1 : compressed)", "level variable `l0` is declared as level 1 but bound by level 0"),
    // "failed to infer lvlToDim from dimToLvl" (three cases)
    (
        "map = ( i, j ) -> ( i floordiv 2 : dense, j floordiv 3 : compressed, i : dense, j mod 3 : dense )",
        "level 0: `d0 floordiv 2` splits d0, which level 2 stores whole",
    ),
    (
        "map = ( i, j ) -> ( i : dense, j floordiv 3 : compressed, i floordiv 3 : dense, j mod 3 : dense )",
        "level 2: `d0 floordiv 3` splits d0, which level 0 stores whole",
    ),
    (
        "map = ( i, j ) -> ( i floordiv -3 : dense, j floordiv -3 : compressed, i mod 3 : dense, j mod 3 : dense )",
        "level 2: `d0 mod 3` needs a `d0 floordiv 3` level",
    ),
    // "expected lvlToDim to be an inverse of dimToLvl"
    (
        "map = {il, jl, ii, jj} ( i = il * 3 + ii, j = jl * 2 + jj ) -> ( il = i floordiv 2 : dense, jl = j floordiv 3 : compressed, ii = i mod 2 : dense, jj = j mod 3 : dense )",
        "dimension 0: the stated inverse `il * 3 + ii` is not the inverse of the level map",
    ),
    // "expected structured size to be >= 0"
    ("map = ( i, j, k ) -> ( i : dense, k floordiv 4 : dense, j : dense, k mod 4 : structured[-2, 4] )", "expected n, the entries kept per group"),
    // "expected n <= m in n_out_of_m"
    ("map = ( i, j, k ) -> ( i : dense, k floordiv 4 : dense, j : dense, k mod 4 : structured[5, 4] )", "level 3: structured[5, 4] needs n <= m"),
    // "expected all dense lvlTypes before a n_out_of_m level"
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 4 : compressed, j : dense, k mod 4 : structured[2, 4] )",
        "level 3: a structured[2, 4] level needs dense levels before it; level 1 is compressed",
    ),
    // "expected n_out_of_m to be the last level type"
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 4 : structured[2, 4], j : dense, k mod 4 : compressed )",
        "level 1: a structured[2, 4] level must be the last level",
    ),
    // "expected 1xm block structure for n_out_of_m level"
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 2 : dense, j : dense, k mod 4 : structured[2, 4] )",
        "level 3: structured[2, 4] on `d2 mod 4` needs a `d2 floordiv 4 : dense` level before it",
    ),
    // "expected coeffiencts of Affine expressions to be equal to m of n_out_of_m level"
    (
        "map = ( i, j, k ) -> ( i : dense, k floordiv 2 : dense, j : dense, k mod 2 : structured[2, 4] )",
        "level 3: a structured[2, 4] level must be `d mod 4` under a `d floordiv 4 : dense` level, found `d2 mod 2`",
    ),
    // "expected only one blocked level with the same coefficients"
    (
        "map = ( i, j, k ) -> ( i floordiv 2 : dense, i mod 2 : dense, j : dense, k floordiv 4 : dense, k mod 4 : structured[2, 4] )",
        "level 4: with a structured[2, 4] level only d2 may be split; level 0 is `d0 floordiv 2`",
    ),
    // The two "... value type mismatch between encoding and tensor element type" cases need a
    // tensor type and are not transcribed.
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32, explicitVal = \"str\"",
        "expected a numeric value for explicitVal",
    ),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32, implicitVal = \"str\"",
        "expected a numeric value for implicitVal",
    ),
    // "implicit value must be zero" (three cases; MLIR reports it when a tensor uses the encoding)
    ("map = (d0, d1) -> (d0 : dense, d1 : compressed), implicitVal = 1 : i32", "implicitVal must be zero, found `1 : i32`"),
    ("map = (d0, d1) -> (d0 : dense, d1 : compressed), implicitVal = 1.0 : f32", "implicitVal must be zero, found `1.000000e+00 : f32`"),
    (
        "map = (d0, d1) -> (d0 : dense, d1 : compressed), explicitVal = #complex.number<:f32 1.0, 0.0>, implicitVal = #complex.number<:f32 1.0, 0.0>",
        "implicitVal must be zero",
    ),
    // From older revisions of the file (the older syntax is refused, naming the current form).
    ("lvlTypes = []", "`lvlTypes` is the older MLIR syntax; write the level map instead"),
    ("dimToLvl = \"wrong\"", "`dimToLvl` is the older MLIR syntax"),
    // EXCEPTION (ENCODING.md, "Level formats"): older MLIR accepted `(d0 : dense, d1 : block2_4)`;
    // structured[n, m] needs the floordiv / mod split here.
    ("map = (d0, d1) -> (d0 : dense, d1 : block2_4)", "level 1: a structured[2, 4] level must be `d mod 4`"),
];

#[test]
fn mlir_invalid_encoding() {
    for (input, want) in INVALID {
        let text = wrap(input);
        match parse(&text) {
            Ok(p) => panic!("accepted: {input}\n  -> {}", p.encoding),
            Err(e) => assert!(
                e.to_string().contains(want),
                "input: {input}\n  want: {want}\n   got: {e}"
            ),
        }
    }
}
