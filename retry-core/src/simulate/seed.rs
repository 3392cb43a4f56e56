//! One independent jitter stream per simulated client, derived from one seed.

/// The seed of client `index`'s jitter stream: the `index`-th output of a
/// SplitMix64 generator started at `seed`.
///
/// Neighbouring clients get unrelated streams (SplitMix's finaliser spreads
/// every bit of the counter), and comparing two policies with the same seed
/// gives every client the same random draws under both, so a difference in
/// the results is the policies' doing, not the dice's.
///
/// ```
/// use retry_core::simulate::client_seed;
/// assert_eq!(client_seed(7, 3), client_seed(7, 3));
/// assert_ne!(client_seed(7, 3), client_seed(7, 4));
/// assert_ne!(client_seed(7, 3), client_seed(8, 3));
/// ```
pub fn client_seed(seed: u64, index: u64) -> u64 {
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GOLDEN_GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
