//! Random bytes from the host (`wasi:random`), e.g. for a new customer's `GlobalId`.

/// `N` random bytes from the host's secure random source.
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    let random = wasip2::random::random::get_random_bytes(N as u64);
    for (byte, random) in bytes.iter_mut().zip(random) {
        *byte = random;
    }
    bytes
}
