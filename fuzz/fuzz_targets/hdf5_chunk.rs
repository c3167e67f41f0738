//! The HDF5 chunk decoder that reads chunked 1-D datasets without libhdf5
//! (`sptk_hdf5::decode_chunk`: deflate and shuffle undone on a chunk's stored bytes) on
//! arbitrary bytes, and the round trip of a chunk shuffled and deflated here.
//!
//! Input: byte 0 the pipeline (bit 0 shuffle, bit 1 deflate, bits 2-3 the mask of filters
//! skipped), byte 1 the element size (1, 2, 4 or 8 by its low two bits), bytes 2-3 the
//! elements per chunk (little-endian, 1 to 4096), bytes 4-5 how many of them the chunk
//! holds (the last chunk of a dataset is cut short), then the stored bytes. Refusals are
//! fine; panics are not, nor a round trip that does not give the elements back.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [flags, sel, c0, c1, e0, e1, raw @ ..] = data else {
        return;
    };
    let shuffle = flags & 1 != 0;
    let deflate = flags & 2 != 0;
    let mask = u32::from((flags >> 2) & 3);
    let size = 1usize << (sel & 3);
    let chunk = usize::from(u16::from_le_bytes([*c0, *c1])) % 4096 + 1;
    let elements = usize::from(u16::from_le_bytes([*e0, *e1])) % (chunk + 1);
    if let Ok(out) = sptk_hdf5::decode_chunk(shuffle, deflate, mask, size, chunk, elements, raw) {
        assert_eq!(out.len(), elements * size);
    }

    // The stored bytes as a chunk's elements (cut or padded with zeros to the chunk),
    // filtered as HDF5 does (shuffle, then deflate), must decode to themselves.
    let mut plain = raw.to_vec();
    plain.resize(chunk * size, 0);
    let mut stored = plain.clone();
    if shuffle && mask & 1 == 0 {
        for (e, element) in plain.chunks_exact(size).enumerate() {
            for (b, &byte) in element.iter().enumerate() {
                stored[b * chunk + e] = byte;
            }
        }
    }
    if deflate && mask & (1 << u32::from(shuffle)) == 0 {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&stored).unwrap();
        stored = z.finish().unwrap();
    }
    let back = sptk_hdf5::decode_chunk(shuffle, deflate, mask, size, chunk, elements, &stored)
        .unwrap_or_else(|e| panic!("a chunk filtered here does not decode: {e}"));
    assert_eq!(
        back,
        plain[..elements * size],
        "the round trip changed the chunk"
    );
});
