//! Random bytes from the host (`wasi:random`), e.g. for a new customer's `GlobalId`.

/// `N` random bytes from the host's secure random source.
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    for (byte, random) in bytes.iter_mut().zip(crate::host::random_bytes(N as u64)) {
        *byte = random;
    }
    bytes
}
