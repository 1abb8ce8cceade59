//! Reading a whole CBOR data item (RFC 8949) as SurrealDB's RPC sends it,
//! for a caller that builds the values faster than the SDK's pure-Python
//! decoder.
//!
//! Integers, byte and text strings, arrays, maps, floats, booleans and null
//! are read here, and so are SurrealDB's NONE (tag 6 of null) and record
//! ids (tag 8 of a two-item array). Any other tagged item is left as its
//! byte span, for the caller to hand to the SDK's decoder (a datetime, a
//! UUID, a duration: what it builds is the SDK's, by construction). Input this reader does not
//! take the way the SDK's decoder would (indefinite lengths, other simple
//! values, shared values or string references, map keys other than strings
//! and integers, invalid UTF-8, nesting deeper than `MAX_DEPTH`) is refused
//! as a whole, so that the caller decodes it as the SDK does. The reader
//! walks each byte once, never trusts a length beyond the input, and never
//! panics on malformed input.

use crate::cbor_read::{Reader, half};
use crate::error::{Error, Result};

/// Nesting deeper than this is refused (the recursion is bounded by it).
pub const MAX_DEPTH: usize = 256;

/// One data item.
#[derive(Debug, PartialEq)]
pub enum Item<'a> {
    /// An unsigned integer.
    Unsigned(u64),
    /// A negative integer: `-1 - n`.
    Negative(u64),
    Bytes(&'a [u8]),
    Text(&'a str),
    Array(Vec<Item<'a>>),
    /// Keys are `Unsigned`, `Negative` or `Text`.
    Map(Vec<(Item<'a>, Item<'a>)>),
    Float(f64),
    Bool(bool),
    Null,
    /// SurrealDB's NONE (tag 6 of null; the SDK refuses any other content).
    None,
    /// A record id (tag 8 of `[table, key]`).
    RecordId(Box<Item<'a>>, Box<Item<'a>>),
    /// Any other tagged item: the bytes of the whole item, tag included.
    Tagged(&'a [u8]),
}

// Tags that refer to other parts of the document (shared values, string
// references): a span of them alone cannot be decoded.
const CONTEXT_TAGS: [u64; 4] = [25, 28, 29, 256];
const TAG_NONE: u64 = 6;
const TAG_RECORD_ID: u64 = 8;

fn refused(what: &str, at: usize) -> Error {
    Error::InvalidArgument(format!("CBOR not read here: {what} at byte {at}"))
}

/// The single data item that is the whole of `data`.
pub fn decode(data: &[u8]) -> Result<Item<'_>> {
    let mut reader = ItemReader {
        r: Reader { data, at: 0 },
    };
    let item = reader.item(0)?;
    if reader.r.at != data.len() {
        return Err(refused("bytes after the item", reader.r.at));
    }
    Ok(item)
}

/// Reads items with `cbor_read`'s primitives (its errors are refusals here).
struct ItemReader<'a> {
    r: Reader<'a>,
}

impl<'a> ItemReader<'a> {
    fn item(&mut self, depth: usize) -> Result<Item<'a>> {
        if depth > MAX_DEPTH {
            return Err(refused("nesting too deep", self.r.at));
        }
        let start = self.r.at;
        let (major, info, value) = self.r.head()?;
        Ok(match major {
            0 => Item::Unsigned(value),
            1 => Item::Negative(value),
            2 => Item::Bytes(self.r.take(value)?),
            3 => {
                let bytes = self.r.take(value)?;
                Item::Text(std::str::from_utf8(bytes).map_err(|_| refused("invalid UTF-8", start))?)
            }
            4 => {
                // At least a byte an item: a hostile length allocates nothing.
                let n = self.r.children(0, value)? as usize;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.item(depth + 1)?);
                }
                Item::Array(items)
            }
            5 => {
                let n = value as usize;
                self.r.children(0, value.saturating_mul(2))?;
                let mut pairs = Vec::with_capacity(n);
                for _ in 0..n {
                    let key = self.item(depth + 1)?;
                    if !matches!(key, Item::Text(_) | Item::Unsigned(_) | Item::Negative(_)) {
                        return Err(refused(
                            "a map key that is not a string or an integer",
                            start,
                        ));
                    }
                    pairs.push((key, self.item(depth + 1)?));
                }
                Item::Map(pairs)
            }
            6 => self.tagged(value, start, depth)?,
            _ => match (info, value) {
                (20, _) => Item::Bool(false),
                (21, _) => Item::Bool(true),
                (22, _) => Item::Null,
                (25, bits) => Item::Float(f64::from(half(bits as u16))), // exact in f32
                (26, bits) => Item::Float(f64::from(f32::from_bits(bits as u32))),
                (27, bits) => Item::Float(f64::from_bits(bits)),
                _ => return Err(refused("a simple value", start)),
            },
        })
    }

    fn tagged(&mut self, tag: u64, start: usize, depth: usize) -> Result<Item<'a>> {
        if CONTEXT_TAGS.contains(&tag) {
            return Err(refused("a shared value or string reference", start));
        }
        let content = self.item(depth + 1)?;
        Ok(match (tag, content) {
            (TAG_NONE, Item::Null | Item::None) => Item::None,
            (TAG_NONE, _) => return Err(refused("NONE of a value", start)),
            (TAG_RECORD_ID, Item::Array(parts)) => match <[Item<'a>; 2]>::try_from(parts) {
                Ok([table, key]) => Item::RecordId(Box::new(table), Box::new(key)),
                Err(_) => Item::Tagged(&self.r.data[start..self.r.at]),
            },
            _ => Item::Tagged(&self.r.data[start..self.r.at]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Vec<u8> {
        let mut out = vec![0x60 | s.len() as u8];
        out.extend_from_slice(s.as_bytes());
        out
    }

    #[test]
    fn scalars_are_read() {
        assert_eq!(decode(&[0x17]).unwrap(), Item::Unsigned(23));
        assert_eq!(decode(&[0x19, 0x01, 0x00]).unwrap(), Item::Unsigned(256));
        assert_eq!(decode(&[0x20]).unwrap(), Item::Negative(0));
        assert_eq!(
            decode(&[0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap(),
            Item::Negative(u64::MAX)
        );
        assert_eq!(decode(&[0xf4]).unwrap(), Item::Bool(false));
        assert_eq!(decode(&[0xf6]).unwrap(), Item::Null);
        assert_eq!(decode(&[0xf9, 0x3c, 0x00]).unwrap(), Item::Float(1.0));
        assert_eq!(
            decode(&[0xf9, 0x00, 0x01]).unwrap(),
            Item::Float(2f64.powi(-24))
        );
        assert_eq!(
            decode(&[0xfa, 0x3f, 0xc0, 0x00, 0x00]).unwrap(),
            Item::Float(1.5)
        );
        assert_eq!(decode(&text("é")).unwrap(), Item::Text("é"));
        assert_eq!(decode(&[0x42, 1, 2]).unwrap(), Item::Bytes(&[1, 2]));
    }

    #[test]
    fn surrealdb_s_none_and_record_ids_are_read_other_tags_left_as_spans() {
        assert_eq!(decode(&[0xc6, 0xf6]).unwrap(), Item::None);
        let mut id = vec![0xc8, 0x82];
        id.extend(text("source"));
        id.extend(text("a1"));
        assert_eq!(
            decode(&id).unwrap(),
            Item::RecordId(Box::new(Item::Text("source")), Box::new(Item::Text("a1")))
        );
        let mut uuid = vec![0xd8, 37, 0x50];
        uuid.extend([7u8; 16]);
        let mut list = vec![0x82];
        list.extend(&uuid);
        list.push(0x01);
        assert_eq!(
            decode(&list).unwrap(),
            Item::Array(vec![Item::Tagged(&uuid), Item::Unsigned(1)])
        );
        // A record id of another shape: left to the SDK.
        let odd = [0xc8, 0x81, 0x01];
        assert_eq!(decode(&odd).unwrap(), Item::Tagged(&odd));
    }

    #[test]
    fn what_the_sdk_reads_otherwise_is_refused() {
        for input in [
            &[0x9f, 0xff][..],                                       // indefinite array
            &[0xf7],                                                 // undefined
            &[0xf0],                                                 // another simple value
            &[0xd8, 29, 0x00],                                       // shared reference
            &[0xa1, 0x80, 0x01],                                     // a key that is an array
            &[0x62, 0xff, 0xfe],                                     // invalid UTF-8
            &[0xc6, 0x01],                                           // NONE of a value
            &[0x18],                                                 // truncated head
            &[0x83, 0x01],                                           // missing items
            &[0x01, 0x02],                                           // bytes after the item
            &[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], // a hostile length
        ] {
            assert!(decode(input).is_err(), "{input:?}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_recursing_further() {
        let deep = vec![0x81; 1_000_000];
        assert!(decode(&deep).is_err());
        let mut ok = vec![0x81; MAX_DEPTH];
        ok.push(0x01);
        assert!(decode(&ok).is_ok());
    }
}
