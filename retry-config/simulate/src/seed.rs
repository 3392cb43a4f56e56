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
/// use retrykit_sim::client_seed;
/// assert_eq!(client_seed(7, 3), client_seed(7, 3));
/// assert_ne!(client_seed(7, 3), client_seed(7, 4));
/// assert_ne!(client_seed(7, 3), client_seed(8, 3));
/// ```
pub fn client_seed(seed: u64, index: u64) -> u64 {
    // The engine's own SplitMix64, which its seeded jitter also draws from.
    retrykit_core::kernel::split_mix(seed, index)
}
