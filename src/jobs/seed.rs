//! The seed of an item, whatever its kind.

use sha2::{Digest, Sha256};

/// The item seed: the first 8 bytes of sha256(job seed ‖ key). Stable across
/// platforms, versions and the order items are made or run in.
pub fn item_seed(job_seed: u64, key: &str) -> u64 {
    let digest = Sha256::new()
        .chain_update(job_seed.to_le_bytes())
        .chain_update(key.as_bytes())
        .finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_depend_on_job_seed_and_key_only() {
        assert_eq!(item_seed(7, "a/b/0"), item_seed(7, "a/b/0"));
        assert_ne!(item_seed(7, "a/b/0"), item_seed(8, "a/b/0"));
        assert_ne!(item_seed(7, "a/b/0"), item_seed(7, "a/b/1"));
    }
}
