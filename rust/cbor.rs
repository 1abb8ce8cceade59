//! CBOR (RFC 8949) encoding of the rows the bulk pipeline writes, so that a
//! batch of chunks reaches SurrealDB as bytes without per-number work in
//! Python.
//!
//! SurrealDB's RPC protocol (embedded engine, WebSocket and HTTP alike)
//! takes a query's parameters as CBOR. A chunk row is a map of four fields:
//! `source` (a record id, encoded once per record by the caller and copied
//! in as it is), `order`, `content` and `embedding`, and optionally its own
//! `id` (so that the writer knows the ids it wrote without reading them back). The vector is an array
//! of floats, each in the shortest form that is exact: a float32 value takes
//! 5 bytes instead of 9, and the engine reads it back as the same `f64`, bit
//! for bit. Non-finite values are refused: they are never a valid embedding.

use crate::error::{Error, Result};

/// A row-major matrix of vectors, as the model gives them.
#[derive(Clone, Copy, Debug)]
pub enum Floats<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl Floats<'_> {
    fn len(&self) -> usize {
        match self {
            Floats::F32(v) => v.len(),
            Floats::F64(v) => v.len(),
        }
    }
}

/// The chunks of a group of records: record `i` owns the next `counts[i]`
/// texts and vectors; `owners[i]` is its id, already CBOR-encoded. With
/// `ids`, row `j` is the record `table:keys[j]`.
#[derive(Clone, Copy, Debug)]
pub struct ChunkRows<'a> {
    pub owners: &'a [&'a [u8]],
    pub counts: &'a [usize],
    pub texts: &'a [&'a str],
    pub vectors: Floats<'a>,
    pub dimension: usize,
    pub ids: Option<RowIds<'a>>,
}

/// The record ids of rows: `table:keys[j]` for row `j`.
#[derive(Clone, Copy, Debug)]
pub struct RowIds<'a> {
    pub table: &'a str,
    pub keys: &'a [&'a str],
}

const ARRAY: u8 = 4;
const MAP: u8 = 5;
const UINT: u8 = 0;
const TEXT: u8 = 3;
const TAG: u8 = 6;
// SurrealDB's CBOR tag of a record id: [table, key].
const RECORD_ID: u64 = 8;

/// The head of a data item: major type and length (or value).
fn head(out: &mut Vec<u8>, major: u8, n: u64) {
    let major = major << 5;
    if n < 24 {
        out.push(major | n as u8);
    } else if n <= u64::from(u8::MAX) {
        out.extend_from_slice(&[major | 24, n as u8]);
    } else if n <= u64::from(u16::MAX) {
        out.push(major | 25);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else if n <= u64::from(u32::MAX) {
        out.push(major | 26);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(major | 27);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn text(out: &mut Vec<u8>, s: &str) {
    head(out, TEXT, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn record_id(out: &mut Vec<u8>, table: &str, key: &str) {
    head(out, TAG, RECORD_ID);
    head(out, ARRAY, 2);
    text(out, table);
    text(out, key);
}

fn float32(out: &mut Vec<u8>, x: f32) {
    out.push(0xfa);
    out.extend_from_slice(&x.to_be_bytes());
}

/// `x` as float32 when that is exact, else as float64.
fn float64(out: &mut Vec<u8>, x: f64) {
    let narrow = x as f32;
    if f64::from(narrow) == x {
        float32(out, narrow);
    } else {
        out.push(0xfb);
        out.extend_from_slice(&x.to_be_bytes());
    }
}

fn check_finite(vectors: Floats<'_>, dimension: usize) -> Result<()> {
    let bad = match vectors {
        Floats::F32(v) => v.iter().position(|x| !x.is_finite()),
        Floats::F64(v) => v.iter().position(|x| !x.is_finite()),
    };
    match bad {
        Some(i) => Err(Error::InvalidArgument(format!(
            "vector {} has a non-finite value (NaN or infinity)",
            i / dimension.max(1)
        ))),
        None => Ok(()),
    }
}

/// Appends vector `row` as a CBOR array of floats.
fn vector(out: &mut Vec<u8>, vectors: Floats<'_>, dimension: usize, row: usize) {
    head(out, ARRAY, dimension as u64);
    let range = row * dimension..(row + 1) * dimension;
    match vectors {
        Floats::F32(v) => v[range].iter().for_each(|&x| float32(out, x)),
        Floats::F64(v) => v[range].iter().for_each(|&x| float64(out, x)),
    }
}

fn check_shape(vectors: Floats<'_>, rows: usize, dimension: usize) -> Result<()> {
    if dimension == 0 && rows > 0 {
        return Err(Error::InvalidArgument(
            "vectors must have at least one dimension".into(),
        ));
    }
    if vectors.len() != rows * dimension {
        return Err(Error::InvalidArgument(format!(
            "{} rows need {} numbers of {dimension} dimensions, got {}",
            rows,
            rows * dimension,
            vectors.len()
        )));
    }
    check_finite(vectors, dimension)
}

/// A CBOR array of `{source, order, content, embedding}` maps, one per text,
/// in the order given; `order` counts from 0 within each record.
pub fn chunk_rows(rows: &ChunkRows<'_>) -> Result<Vec<u8>> {
    if rows.owners.len() != rows.counts.len() {
        return Err(Error::InvalidArgument(format!(
            "{} owners but {} counts",
            rows.owners.len(),
            rows.counts.len()
        )));
    }
    let total = rows
        .counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c));
    if total != Some(rows.texts.len()) {
        return Err(Error::InvalidArgument(format!(
            "the counts do not add up to the {} texts",
            rows.texts.len()
        )));
    }
    check_shape(rows.vectors, rows.texts.len(), rows.dimension)?;
    if let Some(ids) = rows.ids
        && ids.keys.len() != rows.texts.len()
    {
        return Err(Error::InvalidArgument(format!(
            "{} ids for {} texts",
            ids.keys.len(),
            rows.texts.len()
        )));
    }
    let text_bytes: usize = rows.texts.iter().map(|t| t.len()).sum();
    let owner_bytes: usize = (rows.owners.iter().zip(rows.counts))
        .map(|(o, &c)| o.len().saturating_mul(c))
        .fold(0, usize::saturating_add);
    let per_row = 48usize.saturating_add(rows.dimension.saturating_mul(9));
    let mut out = Vec::with_capacity(
        text_bytes
            .saturating_add(owner_bytes)
            .saturating_add(rows.texts.len().saturating_mul(per_row)),
    );
    head(&mut out, ARRAY, rows.texts.len() as u64);
    let mut row = 0;
    for (owner, &count) in rows.owners.iter().zip(rows.counts) {
        for order in 0..count {
            match rows.ids {
                Some(ids) => {
                    head(&mut out, MAP, 5);
                    text(&mut out, "id");
                    record_id(&mut out, ids.table, ids.keys[row]);
                }
                None => head(&mut out, MAP, 4),
            }
            text(&mut out, "source");
            out.extend_from_slice(owner);
            text(&mut out, "order");
            head(&mut out, UINT, order as u64);
            text(&mut out, "content");
            text(&mut out, rows.texts[row]);
            text(&mut out, "embedding");
            vector(&mut out, rows.vectors, rows.dimension, row);
            row += 1;
        }
    }
    Ok(out)
}

/// A CBOR array of `{id, embedding}` maps: record `ids[i]` (CBOR-encoded)
/// with vector `i`.
pub fn vector_rows(ids: &[&[u8]], vectors: Floats<'_>, dimension: usize) -> Result<Vec<u8>> {
    check_shape(vectors, ids.len(), dimension)?;
    let mut out = Vec::with_capacity(16 + ids.len() * (32 + 9 * dimension));
    head(&mut out, ARRAY, ids.len() as u64);
    for (row, id) in ids.iter().enumerate() {
        head(&mut out, MAP, 2);
        text(&mut out, "id");
        out.extend_from_slice(id);
        text(&mut out, "embedding");
        vector(&mut out, vectors, dimension, row);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heads(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        head(&mut out, UINT, n);
        out
    }

    #[test]
    fn heads_take_the_shortest_form() {
        assert_eq!(heads(0), [0x00]);
        assert_eq!(heads(23), [0x17]);
        assert_eq!(heads(24), [0x18, 24]);
        assert_eq!(heads(255), [0x18, 0xff]);
        assert_eq!(heads(256), [0x19, 0x01, 0x00]);
        assert_eq!(heads(65_536), [0x1a, 0, 1, 0, 0]);
        assert_eq!(heads(1 << 32), [0x1b, 0, 0, 0, 1, 0, 0, 0, 0]);
        let mut out = Vec::new();
        head(&mut out, ARRAY, 384);
        assert_eq!(out, [0x99, 0x01, 0x80]);
    }

    #[test]
    fn floats_are_narrowed_only_when_exact() {
        let mut out = Vec::new();
        float64(&mut out, 0.5);
        assert_eq!(out, [0xfa, 0x3f, 0x00, 0x00, 0x00]);
        out.clear();
        float64(&mut out, f64::from(0.1f32));
        assert_eq!(out[0], 0xfa);
        assert_eq!(f32::from_be_bytes(out[1..5].try_into().unwrap()), 0.1f32);
        out.clear();
        float64(&mut out, 0.1);
        assert_eq!(out[0], 0xfb);
        assert_eq!(f64::from_be_bytes(out[1..9].try_into().unwrap()), 0.1);
        out.clear();
        float64(&mut out, -0.0);
        assert_eq!(out, [0xfa, 0x80, 0, 0, 0]);
        out.clear();
        float64(&mut out, 1e300);
        assert_eq!(out[0], 0xfb);
    }

    #[test]
    fn text_is_utf8_with_its_byte_length() {
        let mut out = Vec::new();
        text(&mut out, "é");
        assert_eq!(out, [0x62, 0xc3, 0xa9]);
    }

    #[test]
    fn chunk_rows_encodes_each_text_with_its_owner_and_order() {
        let owner: &[u8] = &[0xc8, 0x82, 0x61, b's', 0x61, b'a']; // tag 8 ["s", "a"]
        let rows = ChunkRows {
            owners: &[owner],
            counts: &[2],
            texts: &["x", "y"],
            vectors: Floats::F32(&[1.0, 0.5]),
            dimension: 1,
            ids: None,
        };
        let out = chunk_rows(&rows).unwrap();
        let mut expected = vec![0x82];
        for (order, t, x) in [(0u8, b'x', [0x3f, 0x80]), (1, b'y', [0x3f, 0x00])] {
            expected.push(0xa4);
            expected.extend_from_slice(b"\x66source");
            expected.extend_from_slice(owner);
            expected.extend_from_slice(b"\x65order");
            expected.push(order);
            expected.extend_from_slice(b"\x67content");
            expected.extend_from_slice(&[0x61, t]);
            expected.extend_from_slice(b"\x69embedding");
            expected.extend_from_slice(&[0x81, 0xfa, x[0], x[1], 0, 0]);
        }
        assert_eq!(out, expected);
    }

    #[test]
    fn chunk_rows_refuses_inconsistent_shapes_and_non_finite_values() {
        let owner: &[u8] = &[0x60];
        let base = ChunkRows {
            owners: &[owner],
            counts: &[1],
            texts: &["x"],
            vectors: Floats::F64(&[1.0, 2.0]),
            dimension: 2,
            ids: None,
        };
        assert!(chunk_rows(&base).is_ok());
        let bad_count = ChunkRows {
            counts: &[2],
            ..base
        };
        assert!(chunk_rows(&bad_count).is_err());
        let bad_owners = ChunkRows {
            owners: &[],
            ..base
        };
        assert!(chunk_rows(&bad_owners).is_err());
        let short = ChunkRows {
            vectors: Floats::F64(&[1.0]),
            ..base
        };
        assert!(chunk_rows(&short).is_err());
        let nan = ChunkRows {
            vectors: Floats::F64(&[1.0, f64::NAN]),
            ..base
        };
        let err = chunk_rows(&nan).unwrap_err();
        assert!(err.to_string().contains("vector 0"));
        let inf = ChunkRows {
            vectors: Floats::F32(&[f32::INFINITY, 1.0]),
            ..base
        };
        assert!(chunk_rows(&inf).is_err());
        let huge = ChunkRows {
            counts: &[usize::MAX],
            ..base
        };
        assert!(chunk_rows(&huge).is_err());
        let short_ids = ChunkRows {
            ids: Some(RowIds {
                table: "t",
                keys: &[],
            }),
            ..base
        };
        assert!(chunk_rows(&short_ids).is_err());
    }

    #[test]
    fn chunk_rows_carry_their_own_ids_when_given() {
        let rows = ChunkRows {
            owners: &[&[0x60]],
            counts: &[1],
            texts: &["x"],
            vectors: Floats::F32(&[1.0]),
            dimension: 1,
            ids: Some(RowIds {
                table: "c",
                keys: &["k"],
            }),
        };
        let out = chunk_rows(&rows).unwrap();
        // [{"id": tag 8 ["c", "k"], "source": "", ...}]
        let mut expected = vec![
            0x81, 0xa5, 0x62, b'i', b'd', 0xc8, 0x82, 0x61, b'c', 0x61, b'k',
        ];
        expected.extend_from_slice(b"\x66source\x60\x65order\x00\x67content\x61x");
        expected.extend_from_slice(b"\x69embedding");
        expected.extend_from_slice(&[0x81, 0xfa, 0x3f, 0x80, 0, 0]);
        assert_eq!(out, expected);
    }

    #[test]
    fn empty_groups_are_empty_arrays() {
        let rows = ChunkRows {
            owners: &[&[0x60]],
            counts: &[0],
            texts: &[],
            vectors: Floats::F32(&[]),
            dimension: 0,
            ids: None,
        };
        assert_eq!(chunk_rows(&rows).unwrap(), [0x80]);
        assert_eq!(vector_rows(&[], Floats::F32(&[]), 3).unwrap(), [0x80]);
    }

    #[test]
    fn vector_rows_pairs_ids_and_vectors() {
        let out = vector_rows(&[&[0x61, b'n']], Floats::F32(&[2.0]), 1).unwrap();
        let mut expected = vec![0x81, 0xa2, 0x62, b'i', b'd', 0x61, b'n'];
        expected.extend_from_slice(b"\x69embedding");
        expected.extend_from_slice(&[0x81, 0xfa, 0x40, 0, 0, 0]);
        assert_eq!(out, expected);
        assert!(vector_rows(&[&[0x60]], Floats::F32(&[1.0, 2.0]), 1).is_err());
    }
}
