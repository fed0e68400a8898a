//! SHA-256 as lowercase hex: the audit log's hash chain, the trust records, the names of kept
//! configs and lock files.
//!
//! Short inputs (every record of an ordinary command, a config, a path) are hashed in portable
//! code, long ones with the processor's SHA instructions. Those need the processor asked first
//! whether it has them (CPUID), which on a virtual machine is a trap to the hypervisor: asking
//! cost about 16 µs of every command here, more than hashing a few KiB without them
//! (docs/BENCHMARKS.md, "Session 17"). Both give the same digest.

/// At this many bytes and more, the processor's instructions pay for asking about them.
const LARGE: usize = 4096;

/// The SHA-256 of `parts` joined, as 64 lowercase hex digits.
pub fn hex(parts: &[&[u8]]) -> String {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len >= LARGE {
        let mut c = ring::digest::Context::new(&ring::digest::SHA256);
        parts.iter().for_each(|p| c.update(p));
        to_hex(c.finish().as_ref())
    } else {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        parts.iter().for_each(|p| h.update(p));
        to_hex(&h.finalize())
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_inputs_give_sha256() {
        assert_eq!(hex(&[b""]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&[b"ab", b"c"]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        // One million 'a's (FIPS 180-2's third example), in pieces on either side of LARGE.
        let a = vec![b'a'; 1_000_000];
        let want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        assert_eq!(hex(&[&a]), want);
        assert_eq!(hex(&[&a[..LARGE - 1], &a[LARGE - 1..]]), want);
        // Either side of the threshold, both implementations agree with each other.
        for n in [LARGE - 1, LARGE, LARGE + 1] {
            let text = vec![b'x'; n];
            use sha2::Digest as _;
            let portable: String = sha2::Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex(&[&text]), portable, "{n} bytes");
        }
    }
}
