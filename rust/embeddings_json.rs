//! The vectors of an OpenAI-style embeddings response,
//! `{"data": [{"embedding": [numbers]}, ...], ...}`, read straight into one
//! row-major f64 matrix instead of a Python float per number.
//!
//! The reader answers only for responses whose result Python is sure to
//! agree with: what `json.loads` would accept, with `data` a list of objects
//! whose `embedding` is a non-empty list of numbers, every row of the same
//! length, and every number finite. A number is parsed by Rust's correctly
//! rounded `str::parse::<f64>`, as `float()` parses it in Python, so the
//! values are identical. Anything else, however valid (a key written with
//! escapes, a duplicate key, `NaN`, ragged rows, deep nesting, a BOM),
//! gets `None`, and the caller decodes the response in Python as before. One
//! pass over the input, no recursion, no panics.

/// The rows of a response, row-major.
#[derive(Debug, PartialEq)]
pub struct EmbeddingRows {
    pub values: Vec<f64>,
    pub rows: usize,
    pub dimension: usize,
}

/// Deeper values than this are left to Python (whose own decoder gives up
/// at some depth).
const MAX_DEPTH: usize = 64; // the bits of `skip_value`'s stack

/// The longest number read here (a shortest f64 repr takes at most 24).
const MAX_NUMBER_LEN: usize = 64;

/// The rows of `body`, or `None` when Python must decode it.
pub fn embedding_rows(body: &[u8]) -> Option<EmbeddingRows> {
    // Python decodes the bytes as UTF-8 (a NUL byte among the first ones
    // would make it pick UTF-16 or -32: a NUL fails the grammar below).
    std::str::from_utf8(body).ok()?;
    let mut reader = Reader { input: body, at: 0 };
    let rows = reader.response()?;
    reader.whitespace();
    (reader.at == body.len()).then_some(rows)
}

struct Reader<'a> {
    input: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// `byte`, after whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// After whitespace, `byte` if it comes next (true), or nothing (false).
    fn next_is(&mut self, byte: u8) -> bool {
        self.whitespace();
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    /// The members of an object (its `{` already read): `member` is given
    /// each key's raw bytes (keys with escapes are refused) and reads the value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        if self.next_is(b'}') {
            return Some(());
        }
        loop {
            self.eat(b'"')?;
            let start = self.at;
            let escaped = self.string_rest()?;
            if escaped {
                return None;
            }
            let key = &self.input[start..self.at - 1];
            self.eat(b':')?;
            member(self, key)?;
            if !self.next_is(b',') {
                return self.eat(b'}');
            }
        }
    }

    /// The elements of an array (its `[` already read), each read by `element`.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if self.next_is(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if !self.next_is(b',') {
                return self.eat(b']');
            }
        }
    }

    fn response(&mut self) -> Option<EmbeddingRows> {
        self.eat(b'{')?;
        let mut rows = None;
        self.object(|reader, key| {
            if key != b"data" {
                return reader.skip_value();
            }
            // A second `data` would win in Python.
            match rows {
                Some(_) => None,
                None => {
                    rows = Some(reader.data()?);
                    Some(())
                }
            }
        })?;
        rows
    }

    fn data(&mut self) -> Option<EmbeddingRows> {
        self.eat(b'[')?;
        let mut rows = EmbeddingRows {
            values: Vec::new(),
            rows: 0,
            dimension: 0,
        };
        self.array(|reader| {
            let before = rows.values.len();
            reader.item(&mut rows.values)?;
            let width = rows.values.len() - before;
            if rows.rows > 0 && width != rows.dimension {
                return None;
            }
            rows.dimension = width;
            rows.rows += 1;
            Some(())
        })?;
        (rows.rows > 0).then_some(rows)
    }

    /// One element of `data`: an object with one non-empty `embedding`.
    fn item(&mut self, values: &mut Vec<f64>) -> Option<()> {
        self.eat(b'{')?;
        let before = values.len();
        let mut seen = false;
        self.object(|reader, key| {
            if key != b"embedding" {
                return reader.skip_value();
            }
            if seen {
                return None;
            }
            seen = true;
            reader.eat(b'[')?;
            reader.array(|reader| {
                values.push(reader.number()?);
                Some(())
            })
        })?;
        (values.len() > before).then_some(())
    }

    /// A finite JSON number, as Python's `json` reads it and `float()`
    /// converts it.
    fn number(&mut self) -> Option<f64> {
        self.whitespace();
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.at += 1;
            self.at_least_one_digit()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.at_least_one_digit()?;
        }
        // Longer numbers are left to Python: no provider writes them, and
        // `str::parse` reads at most 65536 of an exponent, where a long run
        // of leading zeros could make a wrong value finite.
        if self.at - start > MAX_NUMBER_LEN {
            return None;
        }
        // ASCII by the grammar above.
        let text = std::str::from_utf8(&self.input[start..self.at]).ok()?;
        let value: f64 = text.parse().ok()?;
        // Python reads an integer as an `int`, and `-0` is `0`: `0.0` as a float.
        let value = if integer && value == 0.0 { 0.0 } else { value };
        // An overflowing integer is an error in Python, an overflowing
        // fraction infinity: both are left to it.
        value.is_finite().then_some(value)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn at_least_one_digit(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// The rest of a string whose `"` was read; whether it held escapes.
    /// Refused, as by Python's strict decoder: control characters and
    /// unknown escapes.
    fn string_rest(&mut self) -> Option<bool> {
        let mut escaped = false;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    self.at += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                        b'u' => {
                            let hex = self.input.get(self.at + 1..self.at + 5)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.at += 5;
                        }
                        _ => return None,
                    }
                }
                0..=0x1F => return None,
                _ => self.at += 1,
            }
        }
    }

    /// Any JSON value, checked and skipped: nesting is kept on a bit stack
    /// (bit `d` set: the container at depth `d + 1` is an object) rather
    /// than recursed into.
    fn skip_value(&mut self) -> Option<()> {
        let mut objects = 0u64;
        let mut depth = 0usize;
        loop {
            self.whitespace();
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    self.at += 1;
                    let object = open == b'{';
                    if !self.next_is(if object { b'}' } else { b']' }) {
                        if object {
                            objects |= 1 << depth;
                            self.key()?;
                        } else {
                            objects &= !(1 << depth);
                        }
                        depth += 1;
                        continue;
                    }
                }
                b'"' => {
                    self.at += 1;
                    self.string_rest()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => {
                    self.number()?;
                }
            }
            // A value ended: close the containers it ends, then go on to
            // the next element (or return when the outermost value ended).
            loop {
                if depth == 0 {
                    return Some(());
                }
                let object = objects & (1 << (depth - 1)) != 0;
                if self.next_is(b',') {
                    if object {
                        self.key()?;
                    }
                    break;
                }
                self.eat(if object { b'}' } else { b']' })?;
                depth -= 1;
            }
        }
    }

    /// A key and its colon.
    fn key(&mut self) -> Option<()> {
        self.eat(b'"')?;
        self.string_rest()?;
        self.eat(b':')
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let found = self.input.get(self.at..self.at + word.len())? == word;
        found.then(|| self.at += word.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(body: &str) -> Option<(Vec<f64>, usize, usize)> {
        embedding_rows(body.as_bytes()).map(|r| (r.values, r.rows, r.dimension))
    }

    #[test]
    fn reads_the_rows_of_a_response() {
        let body = r#" {"object": "list", "data": [
            {"object": "embedding", "index": 0, "embedding": [0.5, -1e-3, 2]},
            {"embedding": [-0, 1.25E+2, 3e0], "index": 1, "extra": {"a": [1, {"b": null}], "c": "\u00e9\n"}}
        ], "model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 3}} "#;
        let (values, count, dimension) = rows(body).unwrap();
        assert_eq!((count, dimension), (2, 3));
        assert_eq!(values, vec![0.5, -0.001, 2.0, 0.0, 125.0, 3.0]);
        // `-0` is an integer, 0, to Python; `-0.0` keeps its sign.
        assert!(values[3].is_sign_positive());
        assert!(
            rows(r#"{"data": [{"embedding": [-0.0, -0e1]}]}"#)
                .unwrap()
                .0
                .iter()
                .all(|v| v.is_sign_negative())
        );
    }

    #[test]
    fn numbers_round_as_python_float_does() {
        // Halfway cases and long mantissas, where a fast parser may be off by
        // one ulp; the bits are Python's `float()` of each.
        for (text, bits) in [
            ("0.1", 0x3fb999999999999a),
            ("2.2250738585072011e-308", 0xfffffffffffff),
            ("9007199254740993", 0x4340000000000000),
            ("0.30000000000000004", 0x3fd3333333333334),
            ("1.7976931348623157e308", 0x7fefffffffffffff),
            ("2.4703282292062328e-324", 0x1),
            ("123456789012345678901234567890", 0x45f8ee90ff6c373e),
            (
                "1.00000000000000011102230246251565404236316680908203125",
                0x3ff0000000000000,
            ),
        ] {
            let body = format!(r#"{{"data": [{{"embedding": [{text}]}}]}}"#);
            assert_eq!(rows(&body).unwrap().0[0].to_bits(), bits, "{text}");
        }
        // Past `MAX_NUMBER_LEN`, a number is Python's to read.
        let long = format!("0.{}1e{}", "0".repeat(70), 70);
        assert_eq!(
            rows(&format!(r#"{{"data": [{{"embedding": [{long}]}}]}}"#)),
            None
        );
    }

    #[test]
    fn leaves_to_python_what_it_does_not_answer_for() {
        for body in [
            "",
            "[]",
            r#"{"data": []}"#,
            r#"{"data": [{"embedding": []}]}"#,
            r#"{"data": [{"index": 0}]}"#,
            r#"{"data": [[1.0]]}"#,
            r#"{"data": [{"embedding": [1.0, null]}]}"#,
            r#"{"data": [{"embedding": ["1.0"]}]}"#,
            r#"{"data": [{"embedding": [true]}]}"#,
            r#"{"data": [{"embedding": [NaN]}]}"#,
            r#"{"data": [{"embedding": [1e400]}]}"#,
            r#"{"data": [{"embedding": [01]}]}"#,
            r#"{"data": [{"embedding": [1.]}]}"#,
            r#"{"data": [{"embedding": [+1]}]}"#,
            r#"{"data": [{"embedding": [1, 2]}, {"embedding": [1]}]}"#,
            r#"{"data": [{"embedding": [1]}], "data": [{"embedding": [2]}]}"#,
            r#"{"data": [{"embedding": [1], "embedding": [2]}]}"#,
            r#"{"d\u0061ta": [{"embedding": [1]}]}"#,
            r#"{"data": [{"embedding": [1]}]} x"#,
            r#"{"data": [{"embedding": [1]}],}"#,
            r#"{"data": [{"embedding": [1],}]}"#,
            r#"{"data": [{"embedding": [1]}], "usage": {"a": 1,}}"#,
            r#"{"data": [{"embedding": [1]}], "usage": [1 2]}"#,
            r#"{"data": [{"embedding": [1]}], "usage": {"a" 1}}"#,
            r#"{"data": [{"embedding": [1]}], "usage": {"a": 1]}"#,
            r#"{"data": [{"embedding": [1]}], "x": "\x"}"#,
            r#"{"data": [{"embedding": [1]}], "x": "\u12"}"#,
            "{\"data\": [{\"embedding\": [1]}], \"x\": \"\t\"}",
            "\u{feff}{\"data\": [{\"embedding\": [1]}]}",
            r#"{"data": [{"embedding": [1]}], "x": tru}"#,
            r#"{"data": [{"embedding": [1]}"#,
        ] {
            assert_eq!(rows(body), None, "{body}");
        }
        assert_eq!(
            embedding_rows(b"{\"data\": [{\"embedding\": [1]}], \"x\": \"\xff\"}"),
            None
        );
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let deep = |n: usize| {
            format!(
                r#"{{"x": {}{}, "data": [{{"embedding": [1]}}]}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        assert!(rows(&deep(MAX_DEPTH)).is_some());
        assert_eq!(rows(&deep(MAX_DEPTH + 1)), None);
        assert_eq!(rows(&"[".repeat(1_000_000)), None);
        let objects = format!(
            r#"{{"x": {}1{}, "data": [{{"embedding": [1]}}]}}"#,
            r#"{"a": "#.repeat(MAX_DEPTH),
            "}".repeat(MAX_DEPTH)
        );
        assert!(rows(&objects).is_some());
    }
}
