//! Hostile files made by hand, each aimed at one defect of an earlier reader: sizes and
//! offsets that overflow, lengths that would size an allocation from a lie, strings
//! that broke a slice. Every one is refused with a message naming the file and the
//! member or tensor, without a panic and without allocating what the file claims.

use std::io::Write;
use std::path::Path;

use sptk_npy::{read_scipy, Npy, Npz, SafeTensorsFile};

/// One member of a hand-made archive.
struct Member<'a> {
    name: &'a str,
    /// Deflate `bytes` (else store them).
    deflate: bool,
    bytes: Vec<u8>,
    /// The uncompressed size the archive claims, if not the true one.
    claim: Option<u32>,
}

fn member(name: &str, bytes: Vec<u8>) -> Member<'_> {
    Member {
        name,
        deflate: true,
        bytes,
        claim: None,
    }
}

fn deflated(b: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    z.write_all(b).unwrap();
    z.finish().unwrap()
}

/// A zip archive of `members`, written field by field so that any field can lie.
fn zip(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for m in members {
        let data = if m.deflate {
            deflated(&m.bytes)
        } else {
            m.bytes.clone()
        };
        let crc = crc32fast::hash(&m.bytes);
        let size = m.claim.unwrap_or(m.bytes.len() as u32);
        let method: u16 = if m.deflate { 8 } else { 0 };
        let at = out.len() as u32;
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for v in [20u16, 0, method, 0, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, data.len() as u32, size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [m.name.len() as u16, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(m.name.as_bytes());
        out.extend_from_slice(&data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for v in [20u16, 20, 0, method, 0, 0] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, data.len() as u32, size] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        for v in [m.name.len() as u16, 0, 0, 0, 0] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        central.extend_from_slice(&0u32.to_le_bytes());
        central.extend_from_slice(&at.to_le_bytes());
        central.extend_from_slice(m.name.as_bytes());
    }
    let cd_at = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&end_record(
        members.len() as u16,
        central.len() as u32,
        cd_at,
    ));
    out
}

fn end_record(count: u16, cd_size: u32, cd_at: u32) -> Vec<u8> {
    let mut e = 0x0605_4b50u32.to_le_bytes().to_vec();
    for v in [0u16, 0, count, count] {
        e.extend_from_slice(&v.to_le_bytes());
    }
    e.extend_from_slice(&cd_size.to_le_bytes());
    e.extend_from_slice(&cd_at.to_le_bytes());
    e.extend_from_slice(&0u16.to_le_bytes());
    e
}

/// A `.npy` file: version `major`, the dict `dict` with its length field saying `len`
/// (the true length where `None`), then `data`.
fn npy(major: u8, dict: &str, len: Option<u32>, data: &[u8]) -> Vec<u8> {
    let mut b = b"\x93NUMPY".to_vec();
    b.extend_from_slice(&[major, 0]);
    let len = len.unwrap_or(dict.len() as u32);
    if major == 1 {
        b.extend_from_slice(&(len as u16).to_le_bytes());
    } else {
        b.extend_from_slice(&len.to_le_bytes());
    }
    b.extend_from_slice(dict.as_bytes());
    b.extend_from_slice(data);
    b
}

fn text(s: &str) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '|S{}', 'fortran_order': False, 'shape': (), }}\n",
        s.len()
    );
    npy(1, &dict, None, s.as_bytes())
}

fn ints(dtype: &str, v: &[i64]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<{dtype}', 'fortran_order': False, 'shape': ({},), }}\n",
        v.len()
    );
    let data: Vec<u8> = match dtype {
        "i8" => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        "i4" => v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(),
        _ => unreachable!(),
    };
    npy(1, &dict, None, &data)
}

/// The error of reading `bytes` as a SciPy `.npz` named `name`.
fn scipy_error(name: &str, bytes: Vec<u8>, limit: Option<u64>) -> String {
    Npz::from_bytes(Path::new(name), bytes)
        .and_then(|z| read_scipy(&z, limit))
        .unwrap_err()
        .to_string()
}

fn assert_has(e: &str, parts: &[&str]) {
    for p in parts {
        assert!(e.contains(p), "`{p}` missing from: {e}");
    }
}

/// The 0.5 KB archive that aborted the process: a member whose `.npy` header claims a
/// length of almost 4 GiB, deflated, the zip claiming a size to match. The buffer was
/// zero-filled to the claimed size before any check.
#[test]
fn a_header_length_of_4_gib_is_refused_before_any_allocation() {
    let head = npy(2, "{", Some(0xffff_fef0), &[0u8; 16]);
    let a = zip(&[
        member("format.npy", text("csr")),
        Member {
            claim: Some(0xffff_ff00),
            ..member("shape.npy", head.clone())
        },
    ]);
    assert!(a.len() < 1024);
    let e = scipy_error("hostile.npz", a, None);
    assert_has(
        &e,
        &["hostile.npz: shape.npy: ", "deflate expands at most 1032"],
    );
    // The same lie where the zip's size is possible: the header length itself is refused.
    let mut big = head.clone();
    big.resize(2 << 20, b' ');
    let e = header_error(member("shape.npy", big));
    assert_has(
        &e,
        &[
            "h.npz: shape.npy: ",
            "4294967024 bytes long",
            "at most 1048576",
        ],
    );
    // And a header longer than its member.
    let e = header_error(member("a.npy", npy(1, "{'descr': ", Some(900), &[])));
    assert_has(
        &e,
        &[
            "h.npz: a.npy: ",
            "900 bytes long",
            "past the end of the member",
        ],
    );
}

/// The error of reading the `.npy` header of the one member of an archive `h.npz`.
fn header_error(m: Member) -> String {
    let z = Npz::from_bytes(Path::new("h.npz"), zip(&[m])).unwrap();
    z.header(z.names()[0]).unwrap_err().to_string()
}

/// The error of opening `bytes` as an archive `h.npz`.
fn open_error(bytes: Vec<u8>) -> String {
    Npz::from_bytes(Path::new("h.npz"), bytes)
        .err()
        .unwrap()
        .to_string()
}

/// A member whose local header offset (from a zip64 extra field) is near 2^64.
#[test]
fn a_local_header_offset_near_2_64_is_refused() {
    let mut a = zip(&[Member {
        deflate: false,
        ..member("a.npy", ints("i8", &[1, 2]))
    }]);
    // The central record's local-header offset: 0xffffffff with a zip64 extra field
    // saying u64::MAX - 2 (reading the signature there overflowed `offset + 4`).
    let cd = a.len() - 22 - (46 + 5);
    let extra: Vec<u8> = [1u16.to_le_bytes(), 8u16.to_le_bytes()]
        .concat()
        .into_iter()
        .chain((u64::MAX - 2).to_le_bytes())
        .collect();
    a[cd + 42..cd + 46].copy_from_slice(&u32::MAX.to_le_bytes());
    a[cd + 30..cd + 32].copy_from_slice(&(extra.len() as u16).to_le_bytes());
    let tail = a.split_off(cd + 46 + 5);
    a.extend_from_slice(&extra);
    let cd_size = (46 + 5 + extra.len()) as u32;
    a.extend_from_slice(&end_record(1, cd_size, cd as u32));
    drop(tail);
    let e = open_error(a);
    assert_has(
        &e,
        &["h.npz: a.npy: ", "18446744073709551613", "past the end"],
    );
}

/// A zip64 end-of-central-directory locator pointing at byte u64::MAX - 3: the record's
/// fields were read at `offset + 32`, which overflowed.
#[test]
fn a_zip64_locator_past_the_file_is_refused() {
    let mut a = zip(&[member("a.npy", ints("i8", &[1]))]);
    let eocd = a.len() - 22;
    let mut locator = 0x0706_4b50u32.to_le_bytes().to_vec();
    locator.extend_from_slice(&0u32.to_le_bytes());
    locator.extend_from_slice(&(u64::MAX - 3).to_le_bytes());
    locator.extend_from_slice(&1u32.to_le_bytes());
    let mut end = a.split_off(eocd);
    end[10..12].copy_from_slice(&0xffffu16.to_le_bytes());
    a.extend_from_slice(&locator);
    a.extend_from_slice(&end);
    let e = open_error(a);
    assert_has(
        &e,
        &["h.npz: ", "18446744073709551612", "no zip64 end record"],
    );
    // A locator pointing at a zip64 end record cut off by the end of the file.
    let mut a = zip(&[member("a.npy", ints("i8", &[1]))]);
    let mut end = a.split_off(a.len() - 22);
    end[10..12].copy_from_slice(&0xffffu16.to_le_bytes());
    let rec = a.len() as u64;
    a.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
    let mut locator = 0x0706_4b50u32.to_le_bytes().to_vec();
    locator.extend_from_slice(&0u32.to_le_bytes());
    locator.extend_from_slice(&rec.to_le_bytes());
    locator.extend_from_slice(&1u32.to_le_bytes());
    a.extend_from_slice(&locator);
    a.extend_from_slice(&end);
    let e = open_error(a);
    assert_has(&e, &["h.npz: ", "zip64 end record", "cut off"]);
}

/// `format.npy` with an empty or non-ASCII `descr`: its first character was split off
/// at byte 1, which panicked; and a string claiming 2^62 characters, whose byte count
/// overflowed.
#[test]
fn string_members_with_damaged_descr_are_refused() {
    for (descr, want) in [
        ("", "not a string"),
        ("|", "not a string"),
        ("é3", "not a string"),
        ("<U4611686018427387904", "longer than the 65536 bytes"),
        ("|S99999999", "longer than the 65536 bytes"),
    ] {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (), }}");
        let f = npy(3, &dict, None, b"csr");
        let e = scipy_error("h.npz", zip(&[member("format.npy", f)]), None);
        assert_has(&e, &["h.npz: format.npy: ", want]);
    }
}

/// `shape.npy` is read before the arrays are charged to the memory budget: a long one
/// is refused by its header, before it is read.
#[test]
fn a_long_shape_is_refused_before_it_is_read() {
    let n = 1usize << 20;
    let dict = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': ({n},), }}");
    let f = npy(1, &dict, None, &vec![0u8; n * 8]);
    let a = zip(&[member("format.npy", text("csr")), member("shape.npy", f)]);
    let e = scipy_error("h.npz", a, None);
    assert_has(
        &e,
        &["h.npz: shape.npy: ", "1048576 elements", "at most 64"],
    );
}

/// A DIA matrix whose few stored values spread over many more coordinates than the
/// arrays read: the entries are counted against the memory limit before they are
/// allocated.
#[test]
fn dia_entries_count_against_the_memory_limit() {
    let k = 64i64;
    let len = 4096usize;
    let dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({k}, {len}), }}");
    let data = npy(1, &dict, None, &vec![1u8; k as usize * len]);
    let offsets: Vec<i64> = (0..k).collect();
    let a = zip(&[
        member("format.npy", text("dia")),
        member("shape.npy", ints("i8", &[len as i64, len as i64])),
        member("offsets.npy", ints("i8", &offsets)),
        member("data.npy", data),
    ]);
    // Arrays: 64 x 4096 bytes of data and 512 of offsets fit in 1 MiB; their 260,128
    // entries at 17 bytes each do not.
    let e = scipy_error("dia.npz", a.clone(), Some(1 << 20));
    assert_has(
        &e,
        &[
            "dia.npz: data.npy: ",
            "260128 entries",
            "memory limit of 1048576",
        ],
    );
    let z = Npz::from_bytes(Path::new("dia.npz"), a).unwrap();
    assert!(read_scipy(&z, Some(8 << 20)).is_ok());
    // Offsets stored as bytes are widened to 64 bits: counted so before they are read.
    let k = 4096;
    let offsets = npy(
        1,
        &format!("{{'descr': '|i1', 'fortran_order': False, 'shape': ({k},), }}"),
        None,
        &vec![0u8; k],
    );
    let dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({k}, 1), }}");
    let a = zip(&[
        member("format.npy", text("dia")),
        member("shape.npy", ints("i8", &[1, 1])),
        member("offsets.npy", offsets),
        member("data.npy", npy(1, &dict, None, &vec![0u8; k])),
    ]);
    let e = scipy_error("dia.npz", a, Some(20_000));
    assert_has(&e, &["dia.npz: offsets.npy: 36864 bytes", "limit of 20000"]);
}

/// A `.npy` whose header length field is past the end of a tiny file, and one cut
/// inside the length field (the length is read by the same function as a member's).
#[test]
fn npy_header_lengths_past_the_file_are_refused() {
    let e = Npy::from_bytes(Path::new("h.npy"), npy(2, "{}", Some(u32::MAX), &[]))
        .err()
        .unwrap()
        .to_string();
    assert_has(&e, &["h.npy: ", "4294967295 bytes long"]);
    let e = Npy::from_bytes(Path::new("h.npy"), b"\x93NUMPY\x02\x00\x10\x00".to_vec())
        .err()
        .unwrap()
        .to_string();
    assert_has(&e, &["h.npy: ", "cut off at byte 10"]);
}

/// A safetensors header whose tensors' offsets sum past 2^64: the `safetensors` crate
/// added them to the header length unchecked (a panic where overflow checks are on, a
/// wrapped sum where not); they are refused against the file's size first.
#[test]
fn safetensors_offsets_past_the_file_are_refused() {
    let size = (1u64 << 61) - 1;
    let mut fields = Vec::new();
    for i in 0..8u64 {
        fields.push(format!(
            r#""t{i}":{{"dtype":"U8","shape":[{size}],"data_offsets":[{},{}]}}"#,
            i * size,
            (i + 1) * size
        ));
    }
    let header = format!("{{{}}}", fields.join(","));
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header.as_bytes());
    b.extend_from_slice(&[0u8; 8]);
    let e = SafeTensorsFile::from_bytes(Path::new("h.safetensors"), b)
        .err()
        .unwrap()
        .to_string();
    assert_has(&e, &["h.safetensors: tensor `t", "which holds 8 bytes"]);
}

/// A `.npy` of f32 whose floats as f64 would take eight times this machine's memory
/// limit: a sparse file (a header, then a hole), so it costs no disk. The floats were
/// collected unchecked (an allocation abort); now the limit is counted first.
#[test]
fn floats_past_the_memory_limit_are_refused() {
    let n = sptk_tensor::default_memory_limit();
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    let head = npy(1, &dict, None, &[]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.npy");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(head.len() as u64 + n * 4).unwrap();
    let e = Npy::open(&p)
        .unwrap()
        .to_floats::<f64>()
        .unwrap_err()
        .to_string();
    assert_has(&e, &["big.npy: ", "past this machine's memory limit"]);
}

/// A CSR matrix whose one row is stored in reverse: sorting it copies its coordinates,
/// which are counted against what the arrays read leave of the memory limit.
#[test]
fn copies_of_unsorted_csr_rows_count_against_the_memory_limit() {
    let n = 65_536i64;
    let indices: Vec<i64> = (0..n).rev().collect();
    let a = zip(&[
        member("format.npy", text("csr")),
        member("shape.npy", ints("i8", &[1, n])),
        member("indptr.npy", ints("i8", &[0, n])),
        member("indices.npy", ints("i8", &indices)),
        member("data.npy", ints("i4", &vec![1; n as usize])),
    ]);
    // The arrays, 16 + 8n + 4n = 786,448 bytes, fit in 900,000; the row's coordinates
    // sorted as 64-bit (8n more) do not.
    let e = scipy_error("rev.npz", a.clone(), Some(900_000));
    assert_has(
        &e,
        &[
            "rev.npz: indices.npy: ",
            "past its memory limit of 113552 bytes",
        ],
    );
    let z = Npz::from_bytes(Path::new("rev.npz"), a).unwrap();
    assert!(read_scipy(&z, Some(8 << 20)).is_ok());
}
