//! Syntax errors: spans, the one-line `Display` and the caret rendering.

use sptk_encoding::{parse, EncodingErrorKind, ParseErrorKind};

#[test]
fn render_unknown_format() {
    let err = parse("#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compresed) }>")
        .unwrap_err();
    assert_eq!(
        err.kind(),
        &ParseErrorKind::UnknownLevelFormat("compresed".to_string())
    );
    assert_eq!(err.span(), 58..67);
    assert_eq!(
        err.to_string(),
        "column 59: unknown level format `compresed` (formats: dense, batch, compressed, loose_compressed, \
         singleton, structured[n, m], block2_4)"
    );
    assert_eq!(
        err.render(),
        "error: unknown level format `compresed` (formats: dense, batch, compressed, loose_compressed, \
         singleton, structured[n, m], block2_4)\n  \
         |\n\
         1 | #sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compresed) }>\n  \
         |                                                           ^^^^^^^^^\n"
    );
}

#[test]
fn render_expected_on_second_line() {
    let text =
        "#CSR = #sparse_tensor.encoding<{\n  map = (d0, d1) -> (d0 : dense d1 : compressed)\n}>";
    let err = parse(text).unwrap_err();
    assert_eq!(err.expected(), Some("`,` or `)` in the level list"));
    assert_eq!(err.line_column(), (2, 33));
    assert_eq!(
        err.to_string(),
        "line 2, column 33: expected `,` or `)` in the level list, found `d1`"
    );
    assert_eq!(
        err.render(),
        "error: expected `,` or `)` in the level list, found `d1`\n  \
         |\n\
         2 |   map = (d0, d1) -> (d0 : dense d1 : compressed)\n  \
         |                                 ^^\n"
    );
}

#[test]
fn render_rule_error_points_at_level() {
    let err = parse("map = (i, j) -> (i : dense, j : singleton)").unwrap_err();
    let rule = err.encoding_error().unwrap();
    assert_eq!(rule.kind(), EncodingErrorKind::Singleton);
    assert_eq!(rule.level(), Some(1));
    assert_eq!(
        err.render(),
        "error: level 1: the parent of a singleton level must be compressed(nonunique), \
         loose_compressed(nonunique) or singleton(nonunique); level 0 is dense\n  \
         |\n\
         1 | map = (i, j) -> (i : dense, j : singleton)\n  \
         |                             ^^^^^^^^^^^^^\n"
    );
}

#[test]
fn render_at_end_of_text() {
    let err = parse("(d0, d1) -> (d0 : dense, d1 : compressed").unwrap_err();
    assert_eq!(err.span(), 40..40);
    assert_eq!(
        err.render(),
        "error: expected `,` or `)` in the level list, found the end of the text\n  \
         |\n\
         1 | (d0, d1) -> (d0 : dense, d1 : compressed\n  \
         |                                         ^\n"
    );
}

#[test]
fn render_width_error_points_at_value() {
    let err = parse("map = (i, j) -> (i : dense, j : compressed), crdWidth = 2").unwrap_err();
    assert_eq!(
        err.encoding_error().unwrap().kind(),
        EncodingErrorKind::CrdWidth
    );
    assert_eq!(err.span(), 56..57);
}

#[test]
fn older_syntax_names_current_form() {
    let err =
        parse("#sparse_tensor.encoding<{ lvlTypes = [ \"dense\", \"compressed\" ] }>").unwrap_err();
    assert_eq!(
        err.kind(),
        &ParseErrorKind::OlderSyntax("lvlTypes".to_string())
    );
    assert_eq!(
        err.to_string(),
        "column 27: `lvlTypes` is the older MLIR syntax; write the level map instead, e.g. \
         map = (d0, d1) -> (d0 : dense, d1 : compressed)"
    );
    for key in ["dimToLvl", "dimLevelType", "dimOrdering", "higherOrdering"] {
        let err = parse(&format!("{{ {key} = affine_map<(i, j) -> (j, i)> }}")).unwrap_err();
        assert_eq!(
            err.kind(),
            &ParseErrorKind::OlderSyntax(key.to_string()),
            "{key}"
        );
    }
}

#[test]
fn non_affine_expressions() {
    let err = parse("map = (i, j) -> (i * j : dense)").unwrap_err();
    assert!(matches!(err.kind(), ParseErrorKind::NonAffine(_)));
    assert_eq!(err.span(), 17..22);
    let err = parse("map = (i, j) -> (i mod j : dense)").unwrap_err();
    assert!(matches!(err.kind(), ParseErrorKind::NonAffine(_)));
}

#[test]
fn accepted_forms() {
    let want = "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32 }>";
    for text in [
        "#CSR = #sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed), posWidth = 32 }>",
        "#sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed), posWidth = 32 }>",
        "{ map = (i, j) -> (i : dense, j : compressed), posWidth = 32 }",
        "map = (i, j) -> (i : dense, j : compressed), posWidth = 32",
        "  posWidth = 32,\n map = (row, col) -> (row : dense, col : compressed) // CSR\n",
    ] {
        assert_eq!(crate::canon(text), want, "{text}");
    }
    assert_eq!(
        crate::canon("(i, j) -> (j : dense, i : compressed)"),
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>"
    );
}

#[test]
fn ell_spellings_are_one_encoding() {
    let want = "#sparse_tensor.encoding<{ map = [s0](d0, d1) -> (d0 * (s0 * 3) : dense, d0 : dense, d1 : compressed) }>";
    for map in [
        "[c](i, j) -> (c * 3 * i : dense, i : dense, j : compressed)",
        "[s0](d0, d1) -> (d0 * (s0 * 3) : dense, d0 : dense, d1 : compressed)",
        "[s0](d0, d1) -> ((d0 * s0) * 3 : dense, d0 : dense, d1 : compressed)",
        "[s](i, j) -> (s * 3 * i : dense, i : dense, j : compressed)",
        "[s](i, j) -> (i * s * 3 : dense, i : dense, j : compressed)",
        "[s](i, j) -> (3 * (s * i) : dense, i : dense, j : compressed)",
    ] {
        assert_eq!(crate::canon(&format!("map = {map}")), want, "{map}");
    }
    let err = parse("map = [s0](d0, d1) -> (d0 * (s0 * 3) : dense, d1 : dense, d0 : compressed)")
        .unwrap_err();
    assert_eq!(err.encoding_error().unwrap().kind(), EncodingErrorKind::Ell);
}

#[test]
fn other_expressions_print_as_mlir() {
    let cases: &[(&str, &str)] = &[
        (
            "(i, j) -> (i * 8 + j : compressed)",
            "(d0, d1) -> (d0 * 8 + d1 : compressed)",
        ),
        (
            "(i, j) -> (8 * i + j : compressed)",
            "(d0, d1) -> (d0 * 8 + d1 : compressed)",
        ),
        (
            "(i, j) -> (i - j : dense, j : compressed)",
            "(d0, d1) -> (d0 - d1 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (i + j * -3 : dense, j : compressed)",
            "(d0, d1) -> (d0 - d1 * 3 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (i + -2 : dense, j : compressed)",
            "(d0, d1) -> (d0 - 2 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (-i : dense, j : compressed)",
            "(d0, d1) -> (-d0 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> ((i + j) floordiv 2 : dense, i : dense, j : compressed)",
            "(d0, d1) -> ((d0 + d1) floordiv 2 : dense, d0 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (i ceildiv 2 : dense, i : dense, j : compressed)",
            "(d0, d1) -> (d0 ceildiv 2 : dense, d0 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (i - (j + 1) : dense, i : dense, j : compressed)",
            "(d0, d1) -> (d0 - (d1 + 1) : dense, d0 : dense, d1 : compressed)",
        ),
        (
            "(i, j) -> (i * (2 + 3) : dense, j : compressed)",
            "(d0, d1) -> (d0 * 5 : dense, d1 : compressed)",
        ),
    ];
    for (input, want) in cases {
        let printed = crate::canon(&format!("map = {input}"));
        assert_eq!(
            printed,
            format!("#sparse_tensor.encoding<{{ map = {want} }}>"),
            "{input}"
        );
        assert_eq!(crate::canon(&printed), printed);
    }
}

#[test]
fn value_forms() {
    let cases: &[(&str, &str)] = &[
        ("1.0 : f64", "1.000000e+00 : f64"),
        ("-2.5 : f32", "-2.500000e+00 : f32"),
        ("0.1 : f64", "1.000000e-01 : f64"),
        ("0.123456789 : f64", "1.23456789e-01 : f64"),
        ("1.0", "1.000000e+00 : f64"),
        ("1", "1 : i64"),
        ("255 : i8", "-1 : i8"),
        ("255 : ui8", "255 : ui8"),
        ("true", "true"),
        ("1 : i1", "true"),
        ("0x7FF0000000000000 : f64", "0x7FF0000000000000 : f64"),
        ("1.0 : f16", "1.000000e+00 : f16"),
        ("0.1 : bf16", "1.000977e-01 : bf16"),
        (
            "#complex.number<:f64 1.5, -2.0> : complex<f64>",
            "#complex.number<:f64 1.500000e+00, -2.000000e+00> : complex<f64>",
        ),
    ];
    for (input, want) in cases {
        let e = parse(&format!(
            "map = (d0) -> (d0 : compressed), explicitVal = {input}"
        ))
        .unwrap()
        .encoding;
        assert_eq!(e.explicit_val.as_deref(), Some(*want), "{input}");
        assert_eq!(crate::canon(&e.to_string()), e.to_string());
    }
    for bad in ["256 : i8", "1.5 : i32", "1 : f32", "1.0 : tensor", "\"x\""] {
        assert!(
            parse(&format!(
                "map = (d0) -> (d0 : compressed), explicitVal = {bad}"
            ))
            .is_err(),
            "{bad}"
        );
    }
}

#[test]
fn rule_errors_name_the_level() {
    let cases: &[(&str, &str)] = &[
        ("(i, j) -> (i : singleton, j : compressed)", "level 0: a singleton level cannot be the first level"),
        ("(i, j) -> (i : compressed, j : singleton)", "level 1: the parent of a singleton level must be compressed(nonunique), loose_compressed(nonunique) or singleton(nonunique); level 0 is compressed"),
        ("(i, j) -> (i : dense(nonunique), j : compressed)", "level 0: dense levels take no properties, found dense(nonunique)"),
        ("(i, j) -> (i : dense, j : compressed(soa))", "level 1: soa applies only to singleton levels; level 1 is compressed(soa)"),
        ("(i, j) -> (i : dense, j floordiv 4 : dense, j mod 4 : structured[0, 4])", "level 2: structured[0, 4] needs n and m of at least 1"),
        ("(i, j) -> (i floordiv 2 : dense, j : compressed, i mod 3 : dense)", "level 2: `d0 floordiv 2` and `d0 mod 3` split d0 by different sizes"),
        ("(i, j) -> (i floordiv 2 : dense, j : compressed)", "level 0: `d0 floordiv 2` needs a `d0 mod 2` level"),
        ("(i : #sparse_tensor<slice(0, 0, 1)>, j) -> (i : dense, j : compressed)", "dimension 0: the slice size must be positive"),
        ("(i, j) -> (i : compressed(nonunique, high), j : singleton(high))", "level 1: the obsolete `high` property applies only to compressed levels"),
    ];
    for (map, want) in cases {
        let err = parse(&format!("map = {map}")).unwrap_err();
        assert!(
            err.to_string().contains(want),
            "{map}\n want: {want}\n  got: {err}"
        );
    }
}

#[test]
fn hostile_inputs_are_errors_not_panics() {
    let deep = format!(
        "map = (i) -> ({}i{} : dense)",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert!(matches!(
        parse(&deep).unwrap_err().kind(),
        ParseErrorKind::NonAffine(_)
    ));
    let minus = format!("map = (i) -> ({}i : dense)", "-".repeat(5000));
    assert!(parse(&minus).is_err());
    // A stated inverse at a high rank is checked on samples, not on a full grid.
    let rank = 40;
    let lvls: Vec<String> = (0..rank).map(|k| format!("l{k}")).collect();
    let dims: Vec<String> = (0..rank).map(|k| format!("d{k} = l{k}")).collect();
    let specs: Vec<String> = (0..rank).map(|k| format!("l{k} = d{k} : dense")).collect();
    let text = format!(
        "map = {{{}}} ({}) -> ({})",
        lvls.join(", "),
        dims.join(", "),
        specs.join(", ")
    );
    assert_eq!(parse(&text).unwrap().encoding.dim_rank(), rank);
    let swapped = text.replace("d0 = l0, d1 = l1", "d0 = l1, d1 = l0");
    let err = parse(&swapped).unwrap_err();
    assert!(
        err.to_string()
            .contains("dimension 0: the stated inverse `l1` is not the inverse"),
        "{err}"
    );
    for text in [
        "",
        "#",
        "map",
        "map =",
        "{",
        "(",
        "(i) ->",
        "map = (i) -> (i : structured[",
        "\u{1F600}",
    ] {
        assert!(parse(text).is_err(), "{text:?}");
    }
    // Constants whose product overflows stay a general expression (it parses; converting
    // into it is refused).
    let huge = format!(
        "map = [s](i, j) -> (i * s * {} * {} : dense, i : dense, j : compressed)",
        i64::MAX,
        i64::MAX
    );
    let e = parse(&huge).unwrap().encoding;
    assert!(matches!(
        e.levels[0].expr,
        sptk_encoding::LevelExpr::Other(_)
    ));
    assert!(e.check_convertible().is_err());
}

/// Found by the `encoding_parse` fuzz target: two constants whose product overflows made
/// the simplifier swap them forever (a stack overflow reachable from a hostile .spt).
#[test]
fn overflowing_constant_products_do_not_recurse() {
    assert!(parse("(u=(2222*22222222222222222(4-").is_err());
    // Either answer is fine; returning at all is the point.
    let _ = parse(
        "map = (i, j) -> (i * 9223372036854775807 * 9223372036854775807 : dense, j : compressed)",
    );
    let big = sptk_encoding::AffineExpr::times(
        sptk_encoding::AffineExpr::Const(i64::MAX),
        sptk_encoding::AffineExpr::Const(3),
    );
    assert!(matches!(big, sptk_encoding::AffineExpr::Mul(..)));
}

/// Found by the `encoding_parse` fuzz target: `d0 + (s0 - 1)` printed as `d0 + s0 - 1`,
/// which read back as a different tree.
#[test]
fn nested_sums_print_and_read_back_as_one_expression() {
    let text = "map = [s0](d0, d1) -> (d0 + (s0 - 1) : dense, d0 : dense, d1 : compressed)";
    let e = parse(text).unwrap().encoding;
    let again = parse(&e.to_string()).unwrap().encoding;
    assert_eq!(again, e, "{e}");
}

#[test]
fn division_by_zero_is_refused_with_a_caret_under_the_divisor() {
    for (op, col) in [("floordiv", 40), ("ceildiv", 39), ("mod", 35)] {
        let text = format!("map = (i, j) -> (i : dense, j {op} 0 : dense, j : compressed)");
        let err = parse(&text).unwrap_err();
        let msg = format!(
            "division by zero: the right side of `{op}` is 0, expected a positive constant"
        );
        assert_eq!(err.to_string(), format!("column {col}: {msg}"), "{op}");
        assert_eq!(
            err.render(),
            format!(
                "error: {msg}\n  |\n1 | {text}\n  | {}^\n",
                " ".repeat(col - 1)
            ),
            "{op}"
        );
    }
    // A divisor that folds to zero is the same division.
    let err =
        parse("map = (i, j) -> (i : dense, j mod (2 - 2) : dense, j : compressed)").unwrap_err();
    assert_eq!(
        err.to_string(),
        "column 35: division by zero: the right side of `mod` is 0, expected a positive constant"
    );
    // Non-zero divisors still parse.
    assert!(parse("map = (i, j) -> (i : dense, j floordiv 4 : dense, j mod 4 : dense)").is_ok());
}
