//! The layout round trips, and a damaged one is refused.

use super::*;

/// Lays `answer` out in memory as the helper does in its memfd, 8-aligned (the
/// alignment of every element type but the 64 the helper's pages give).
fn laid_out(answer: &Answer) -> Vec<u64> {
    let tensor_labels = answer.tensor_labels();
    let w = Writer::answer(answer, &tensor_labels);
    let mut bytes = vec![0u8; w.len()];
    let head = w.head();
    bytes[..head.len()].copy_from_slice(&head);
    for (at, a) in w.placed() {
        bytes[at..at + a.len()].copy_from_slice(a);
    }
    words(&bytes)
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

fn decoded(words: Vec<u64>, len: usize) -> Result<Decoded, Damaged> {
    let owner = Arc::new(words);
    let map: &[u8] = pod_bytes(&owner[..]);
    let map = &map[..len.min(map.len())];
    // The owner keeps `map` alive; nothing writes it.
    decode(map, owner.clone(), std::path::Path::new("f.h5"))
}

fn matrix(content: Content) -> Answer {
    Answer::Matrix(Box::new(Matrix {
        object: "/X".into(),
        kind: Kind::AnnData,
        layout: "csr_matrix".into(),
        content,
        labels: vec![Some(Arc::new(Labels::from_strings(["a", "b", "c"]))), None],
        notes: vec!["rows labelled from /obs/_index".into()],
    }))
}

fn csr() -> Tensor {
    let encoding = "map = (i, j) -> (i : dense, j : compressed), posWidth = 32, crdWidth = 16"
        .parse()
        .unwrap();
    Tensor::try_from_parts(
        encoding,
        vec![3, 4],
        vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(IndexVec::U32(vec![0u32, 2, 2, 3].into())),
                crd: Some(IndexVec::U16(vec![0u16, 3, 1].into())),
            },
        ],
        ValueVec::F64(vec![1.5, -2.0, 4.0].into()),
    )
    .unwrap()
}

#[test]
fn every_answer_round_trips_borrowing_its_arrays() {
    let t = csr()
        .with_labels(1, Labels::from_strings(["w", "x", "y", "z"]))
        .unwrap()
        .with_applied_slices(vec![AppliedSlice {
            dim: 1,
            offset: 2,
            size: 4,
            stride: 3,
        }]);
    let Decoded::Answer(Answer::Matrix(m)) =
        decoded(laid_out(&matrix(Content::Tensor(t.clone()))), usize::MAX).unwrap()
    else {
        panic!("not a matrix");
    };
    assert_eq!(
        (m.object.as_str(), m.kind, m.layout.as_str()),
        ("/X", Kind::AnnData, "csr_matrix")
    );
    assert_eq!(m.notes, ["rows labelled from /obs/_index"]);
    assert_eq!(
        m.labels[0].as_ref().unwrap().iter().collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert!(m.labels[1].is_none());
    let Content::Tensor(back) = m.content else {
        panic!("not level arrays");
    };
    assert_eq!(back, t);
    assert_eq!(back.labels(1), t.labels(1));
    assert_eq!(back.applied_slices(), t.applied_slices());
    assert!(matches!(back.values(), ValueVec::F64(v) if v.is_shared()));

    let e = Entries::from_checked_arrays(
        vec![3, 4],
        vec![
            IndexVec::U8(vec![2u8, 0].into()),
            IndexVec::U8(vec![1u8, 3].into()),
        ],
        ValueVec::Bool(vec![true, false].into()),
    )
    .unwrap();
    let Decoded::Answer(Answer::Matrix(m)) =
        decoded(laid_out(&matrix(Content::Entries(e.clone()))), usize::MAX).unwrap()
    else {
        panic!("not a matrix");
    };
    let Content::Entries(back) = m.content else {
        panic!("not coordinates");
    };
    assert_eq!(back.coord_arrays(), e.coord_arrays());
    assert_eq!(back.values(), e.values());

    let members = vec![Member {
        path: "/X".into(),
        layout: "csr_matrix".into(),
        dims: vec![3, 4],
        value_type: Some(ValueType::F32),
        entries: None,
    }];
    let Decoded::Answer(Answer::Members(back)) =
        decoded(laid_out(&Answer::Members(members.clone())), usize::MAX).unwrap()
    else {
        panic!("not members");
    };
    assert_eq!(back, members);

    let error = H5Error {
        file: "f.h5".into(),
        object: "/X/indptr".into(),
        message: "decreases".into(),
        memory_limit: None,
    };
    let Decoded::Answer(Answer::Error(back)) =
        decoded(laid_out(&Answer::Error(error)), usize::MAX).unwrap()
    else {
        panic!("not an error");
    };
    assert_eq!(back.to_string(), "f.h5: /X/indptr: decreases");
    assert!(back.memory_limit.is_none());

    // A refusal for size crosses with its counts, so the caller sorts it as such.
    let over = H5Error {
        memory_limit: Some(Box::new(sptk_tensor::MemoryLimit {
            array: "/X/data".into(),
            elements: 1000,
            bytes: 4000,
            total: 4000,
            limit: 100,
        })),
        ..back
    };
    let Decoded::Answer(Answer::Error(back)) =
        decoded(laid_out(&Answer::Error(over)), usize::MAX).unwrap()
    else {
        panic!("not an error");
    };
    let m = back.memory_limit.expect("the memory limit crossed");
    assert_eq!((m.elements, m.bytes, m.limit), (1000, 4000, 100));
}

#[test]
fn planned_arrays_round_trip_and_damaged_plans_never_panic() {
    let plan = |ty, layout| Plan { ty, len: 7, layout };
    let planned = Planned {
        dims: [3, 4],
        by_rows: true,
        arrays: [
            plan(ValueType::I64, Layout::Contiguous { offset: 4096 }),
            plan(
                ValueType::U16,
                Layout::Chunked {
                    chunk: 4,
                    shuffle: true,
                    deflate: true,
                    chunks: vec![
                        StoredChunk {
                            offset: 100,
                            bytes: 9,
                            skipped: 0,
                        },
                        StoredChunk {
                            offset: 200,
                            bytes: 8,
                            skipped: 2,
                        },
                    ],
                },
            ),
            plan(ValueType::F32, Layout::Contiguous { offset: 0 }),
        ],
        names: ["/X/indptr", "/X/indices", "/X/data"].map(String::from),
    };
    let answer = matrix(Content::Planned(planned.clone()));
    let good = laid_out(&answer);
    let Decoded::Answer(Answer::Matrix(m)) = decoded(good.clone(), usize::MAX).unwrap() else {
        panic!("not a matrix");
    };
    let Content::Planned(back) = m.content else {
        panic!("not planned");
    };
    assert_eq!(back, planned);
    // No array of the content travels: only the labels' two.
    let tensor_labels = answer.tensor_labels();
    let w = Writer::answer(&answer, &tensor_labels);
    assert_eq!((w.placed().len(), w.content()), (2, 2..2));
    // Any byte of the record changed: a plan (checked when executed) or a refusal.
    let bytes: Vec<u8> = pod_bytes(&good[..]).to_vec();
    let record_end = PREFIX + u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    for at in 0..record_end {
        for x in [0u8, 1, 2, 0x7f, 0xff] {
            let mut b = bytes.clone();
            b[at] = x;
            let _ = decoded(words(&b), usize::MAX);
        }
    }
}

#[test]
fn a_copy_request_places_every_array_apart_inside_the_layout() {
    let answer = matrix(Content::Tensor(csr()));
    let tensor_labels = answer.tensor_labels();
    let w = Writer::answer(&answer, &tensor_labels);
    let bytes = w.copy_request();
    let r = copy_request(&bytes).unwrap();
    assert_eq!(r.total, w.len());
    assert_eq!(&bytes[r.head.clone()], &w.head()[..]);
    // The labels' two arrays, then the content's three (pos, crd, values).
    let placed = w.placed();
    assert_eq!(r.arrays.len(), placed.len());
    assert_eq!(
        r.arrays.iter().map(|a| a.content).collect::<Vec<_>>(),
        [false, false, true, true, true]
    );
    for a in &r.arrays {
        let (_, b) = placed.iter().find(|p| p.0 == a.at).unwrap();
        assert_eq!((a.addr, a.len), (b.as_ptr() as u64, b.len()));
    }
    // Cut short or changed anywhere: refused or still inside the layout, never a panic.
    for cut in 0..bytes.len() {
        let _ = copy_request(&bytes[..cut]);
    }
    for at in 0..bytes.len() {
        for x in [0u8, 1, 0x7f, 0xff] {
            let mut b = bytes.clone();
            b[at] = x;
            if let Ok(r) = copy_request(&b) {
                assert!(r.head.len() <= r.total);
                let mut spans: Vec<_> = r.arrays.iter().map(|a| (a.at, a.len)).collect();
                spans.sort_unstable();
                let mut end = r.head.len();
                for (at, len) in spans {
                    assert!(at >= end && at + len <= r.total, "{at} {len}");
                    end = at + len;
                }
            }
        }
    }
    // Two arrays in the same place: refused.
    let mut b = bytes.clone();
    let second = VM_PREFIX + VM_ENTRY;
    let first_at: [u8; 8] = b[VM_PREFIX..VM_PREFIX + 8].try_into().unwrap();
    b[second..second + 8].copy_from_slice(&first_at);
    assert!(copy_request(&b).unwrap_err().contains("overlaps"));
}

#[test]
fn a_damaged_answer_is_refused_never_trusted() {
    let good = laid_out(&matrix(Content::Tensor(csr())));
    let len = good.len() * 8;
    // Cut short anywhere: refused (or, cut inside padding after the record, refused
    // when an array runs past the end).
    for cut in 0..len {
        assert!(
            !matches!(decoded(good.clone(), cut), Ok(Decoded::Answer(_))) || cut >= len - 8,
            "cut at {cut} accepted"
        );
    }
    // Any byte of the prefix and record changed: an answer that validates or a
    // refusal, never a panic or an out-of-bounds slice.
    let bytes: Vec<u8> = pod_bytes(&good[..]).to_vec();
    let record_end = PREFIX + u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    for at in 0..record_end {
        for x in [0u8, 1, 0x7f, 0xff] {
            let mut b = bytes.clone();
            b[at] = x;
            let _ = decoded(words(&b), usize::MAX);
        }
    }
    // Coordinates past the dimension in otherwise well-formed arrays: validated as
    // any input's, with the validator's words.
    let mut b = bytes.clone();
    let crd = [0u8, 0, 3, 0, 1, 0];
    let at = (record_end..b.len() - crd.len())
        .find(|&i| b[i..i + crd.len()] == crd)
        .expect("the crd array is in the data");
    b[at + 2] = 9;
    match decoded(words(&b), usize::MAX) {
        Ok(Decoded::Invalid(why)) => assert!(why.contains('9'), "{why}"),
        _ => panic!("an out-of-range coordinate got through"),
    }
    b.truncate(8);
    assert!(decoded(words(&b), usize::MAX).is_err());
}
