//! Reading the vectors out of a SurrealDB RPC response (CBOR, RFC 8949)
//! without decoding every number into a Python object.
//!
//! A `query` response is a map whose `result` is one entry per statement:
//! `{result, status, time}`. A statement whose result is an array of
//! `[id, [numbers of one dimension]]` pairs is read here: its numbers into one
//! row-major f32 matrix, its ids left as byte spans for the caller to decode.
//! Every other result is left as a byte span too. The reader walks each item
//! once (linear in the response), never trusts a length beyond the input,
//! and reports malformed input as an error rather than panicking.

use crate::error::{Error, Result};

/// The rows of one statement: each id's byte span, and the vectors.
#[derive(Debug, Default, PartialEq)]
pub struct VectorRows {
    pub ids: Vec<(usize, usize)>,
    pub vectors: Vec<f32>,
}

/// One statement's answer.
#[derive(Debug, PartialEq)]
pub struct Statement {
    /// `status` as sent (`OK` or `ERR`).
    pub status: String,
    /// The byte span of `result`.
    pub result: (usize, usize),
    /// `result` read as vector rows, when it has that shape.
    pub rows: Option<VectorRows>,
}

fn malformed(what: &str, at: usize) -> Error {
    Error::InvalidArgument(format!("malformed CBOR response: {what} at byte {at}"))
}

/// The bytes of a CBOR input and a position in them (`crate::cbor_value`
/// reads whole items with the same primitives).
pub(crate) struct Reader<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .data
            .get(self.at)
            .ok_or_else(|| malformed("unexpected end", self.at))?;
        self.at += 1;
        Ok(b)
    }

    pub(crate) fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let start = self.at;
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| start.checked_add(n))
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| malformed("length past the end", start))?;
        self.at = end;
        Ok(&self.data[start..end])
    }

    /// A head: (major type, additional information, argument).
    pub(crate) fn head(&mut self) -> Result<(u8, u8, u64)> {
        let at = self.at;
        let b = self.byte()?;
        let (major, info) = (b >> 5, b & 31);
        let value = match info {
            0..=23 => u64::from(info),
            24..=27 => {
                let bytes = self.take(1 << (info - 24))?;
                bytes.iter().fold(0u64, |v, &b| v << 8 | u64::from(b))
            }
            _ => return Err(malformed("indefinite or reserved length", at)),
        };
        Ok((major, info, value))
    }

    /// Skips one item; nesting is bounded by the input's length.
    fn skip(&mut self) -> Result<()> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let (major, _, value) = self.head()?;
            match major {
                2 | 3 => {
                    self.take(value)?;
                }
                4 => pending = self.children(pending, value)?,
                5 => pending = self.children(pending, value.saturating_mul(2))?,
                6 => pending += 1,
                _ => {}
            }
        }
        Ok(())
    }

    /// `pending + n`, refusing counts the remaining input cannot hold (each
    /// item takes at least one byte), so a hostile length cannot loop long.
    pub(crate) fn children(&self, pending: u64, n: u64) -> Result<u64> {
        let left = (self.data.len() - self.at) as u64;
        pending
            .checked_add(n)
            .filter(|&p| p <= left)
            .ok_or_else(|| malformed("more items than bytes", self.at))
    }

    fn text(&mut self) -> Result<&'a str> {
        let at = self.at;
        let (major, _, len) = self.head()?;
        if major != 3 {
            return Err(malformed("expected a text string", at));
        }
        std::str::from_utf8(self.take(len)?).map_err(|_| malformed("invalid UTF-8", at))
    }

    /// The length of an array (major type 4) or map (5) that must be next.
    fn length(&mut self, major: u8) -> Result<u64> {
        let at = self.at;
        let (found, _, len) = self.head()?;
        if found != major {
            let what = if major == 4 {
                "expected an array"
            } else {
                "expected a map"
            };
            return Err(malformed(what, at));
        }
        Ok(len)
    }

    fn array_len(&mut self) -> Result<u64> {
        self.length(4)
    }

    fn map_len(&mut self) -> Result<u64> {
        self.length(5)
    }

    /// A number as f32, or None (the position is then unspecified).
    fn number(&mut self) -> Result<Option<f32>> {
        let (major, info, value) = self.head()?;
        Ok(match (major, info) {
            (0, _) => Some(value as f32),
            (1, _) => Some(-1.0 - value as f32),
            (7, 25) => Some(half(value as u16)),
            (7, 26) => Some(f32::from_bits(value as u32)),
            (7, 27) => Some(f64::from_bits(value) as f32),
            _ => None,
        })
    }
}

/// An IEEE 754 half-precision number (RFC 8949, appendix D).
pub(crate) fn half(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    }
}

/// `result` as vector rows of `dimension`, or None if it has another shape.
fn vector_rows(r: &mut Reader<'_>, dimension: usize) -> Result<Option<VectorRows>> {
    let (major, _, rows) = r.head()?;
    if major != 4 {
        return Ok(None);
    }
    let mut out = VectorRows::default();
    for _ in 0..rows {
        if r.array_len()? != 2 {
            return Ok(None);
        }
        let start = r.at;
        r.skip()?;
        out.ids.push((start, r.at));
        if r.array_len()? != dimension as u64 {
            return Ok(None);
        }
        for _ in 0..dimension {
            match r.number()? {
                Some(x) => out.vectors.push(x),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(out))
}

fn statement(data: &[u8], r: &mut Reader<'_>, dimension: usize) -> Result<Statement> {
    let mut status = String::new();
    let mut result = None;
    let mut rows = None;
    for _ in 0..r.map_len()? {
        match r.text()? {
            "status" => status = r.text()?.to_owned(),
            "result" => {
                let start = r.at;
                r.skip()?;
                let end = r.at;
                let mut inner = Reader { data, at: start };
                rows = vector_rows(&mut inner, dimension).unwrap_or(None);
                result = Some((start, end));
            }
            _ => r.skip()?,
        }
    }
    let result = result.ok_or_else(|| malformed("a statement without a result", r.at))?;
    Ok(Statement {
        status,
        result,
        rows,
    })
}

/// The statements of a `query` response; an `error` response, or one of
/// another shape, is an error (the caller then decodes it as usual).
pub fn query_statements(data: &[u8], dimension: usize) -> Result<Vec<Statement>> {
    let mut r = Reader { data, at: 0 };
    let mut found = None;
    for _ in 0..r.map_len()? {
        if r.text()? == "result" {
            let count = r.array_len()?;
            let mut statements = Vec::new();
            for _ in 0..count {
                statements.push(statement(data, &mut r, dimension)?);
            }
            found = Some(statements);
        } else {
            r.skip()?;
        }
    }
    found.ok_or_else(|| malformed("a response without results", 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(out: &mut Vec<u8>, major: u8, n: u64) {
        let m = major << 5;
        match n {
            0..=23 => out.push(m | n as u8),
            24..=0xff => out.extend([m | 24, n as u8]),
            0x100..=0xffff => {
                out.push(m | 25);
                out.extend((n as u16).to_be_bytes());
            }
            _ => {
                out.push(m | 27);
                out.extend(n.to_be_bytes());
            }
        }
    }

    fn text(out: &mut Vec<u8>, s: &str) {
        head(out, 3, s.len() as u64);
        out.extend(s.as_bytes());
    }

    /// A record id as SurrealDB sends it: tag 8, [table, id].
    fn record(out: &mut Vec<u8>, table: &str, id: &str) {
        head(out, 6, 8);
        head(out, 4, 2);
        text(out, table);
        text(out, id);
    }

    fn response(statements: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        head(&mut out, 5, 2);
        text(&mut out, "id");
        text(&mut out, "x");
        text(&mut out, "result");
        head(&mut out, 4, statements.len() as u64);
        for s in statements {
            head(&mut out, 5, 3);
            text(&mut out, "result");
            out.extend(s);
            text(&mut out, "status");
            text(&mut out, "OK");
            text(&mut out, "time");
            text(&mut out, "1ms");
        }
        out
    }

    #[test]
    fn reads_ids_and_numbers_of_every_encoding() {
        let mut rows = Vec::new();
        head(&mut rows, 4, 2);
        head(&mut rows, 4, 2);
        record(&mut rows, "t", "a");
        head(&mut rows, 4, 3);
        rows.push(0xfb); // f64
        rows.extend(0.5f64.to_be_bytes());
        rows.push(0xfa); // f32
        rows.extend((-2.25f32).to_be_bytes());
        rows.extend([0xf9, 0x3c, 0x00]); // f16 1.0
        head(&mut rows, 4, 2);
        record(&mut rows, "t", "b");
        head(&mut rows, 4, 3);
        head(&mut rows, 0, 7);
        head(&mut rows, 1, 2); // -3
        head(&mut rows, 0, 0);
        let mut token = Vec::new();
        text(&mut token, "tok");
        let data = response(&[token.clone(), rows]);
        let got = query_statements(&data, 3).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].status, "OK");
        assert_eq!(&data[got[0].result.0..got[0].result.1], &token[..]);
        assert_eq!(got[0].rows, None);
        let rows = got[1].rows.as_ref().unwrap();
        assert_eq!(rows.vectors, vec![0.5, -2.25, 1.0, 7.0, -3.0, 0.0]);
        let mut a = Vec::new();
        record(&mut a, "t", "a");
        assert_eq!(&data[rows.ids[0].0..rows.ids[0].1], &a[..]);
    }

    #[test]
    fn other_shapes_are_left_to_the_caller() {
        let mut wrong_dim = Vec::new();
        head(&mut wrong_dim, 4, 1);
        head(&mut wrong_dim, 4, 2);
        text(&mut wrong_dim, "id");
        head(&mut wrong_dim, 4, 1);
        head(&mut wrong_dim, 0, 1);
        let mut not_numbers = Vec::new();
        head(&mut not_numbers, 4, 1);
        head(&mut not_numbers, 4, 2);
        text(&mut not_numbers, "id");
        head(&mut not_numbers, 4, 2);
        text(&mut not_numbers, "a");
        text(&mut not_numbers, "b");
        let mut empty = Vec::new();
        head(&mut empty, 4, 0);
        let data = response(&[wrong_dim, not_numbers, empty]);
        let got = query_statements(&data, 2).unwrap();
        assert_eq!(got[0].rows, None);
        assert_eq!(got[1].rows, None);
        assert_eq!(got[2].rows, Some(VectorRows::default()));
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let mut rows = Vec::new();
        head(&mut rows, 4, 1);
        head(&mut rows, 4, 2);
        record(&mut rows, "t", "a");
        head(&mut rows, 4, 1);
        head(&mut rows, 0, 1);
        let data = response(&[rows]);
        for cut in 0..data.len() {
            assert!(query_statements(&data[..cut], 1).is_err(), "cut at {cut}");
        }
        // A huge declared length, an indefinite length, a non-map.
        for bad in [
            vec![0xbb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            vec![0xbf],
            vec![0x80],
            vec![
                0xa1, 0x66, b'r', b'e', b's', b'u', b'l', b't', 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff,
            ],
        ] {
            assert!(query_statements(&bad, 1).is_err());
        }
        assert!(query_statements(&data, 1).is_ok());
    }

    #[test]
    fn half_precision_matches_the_rfc_examples() {
        assert_eq!(half(0x0000), 0.0);
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0x3e00), 1.5);
        assert_eq!(half(0x7bff), 65504.0);
        assert_eq!(half(0x0001), 5.960_464_5e-8);
        assert_eq!(half(0xc400), -4.0);
        assert!(half(0x7c00).is_infinite() && half(0x7e00).is_nan());
    }
}
