//! Standard base64 decoding (RFC 4648, with or without padding): the `Basic` credentials a
//! client sends to the sandbox's proxy, which name the command they come from.

/// The bytes `text` encodes, or `None` when it is not base64.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_encoders_write() {
        assert_eq!(decode("YWdlbnRzaDoxOWFiLTQy").as_deref(), Some(&b"agentsh:19ab-42"[..]));
        assert_eq!(decode("YQ==").as_deref(), Some(&b"a"[..]));
        assert_eq!(decode("YWI=").as_deref(), Some(&b"ab"[..]));
        assert_eq!(decode("YWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(decode("").as_deref(), Some(&b""[..]));
        assert_eq!(decode("a"), None);
        assert_eq!(decode("a!bc"), None);
    }
}
