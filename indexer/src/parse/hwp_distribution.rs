//! The text of an HWP distribution document (배포용 문서: a document shared to be read, not
//! edited). Its sections are in the `ViewText` storage, each encrypted: the section's first
//! record (`DISTRIBUTE_DOC_DATA`, 256 bytes) holds, masked by MSVC's `rand()` seeded with its
//! first four bytes, the AES-128 key of the rest, which is decrypted in ECB mode (then inflated
//! as a plain section is). The key travels with the file, so no password is asked for: the
//! format hides the text from editors, not from readers.

use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockDecrypt, KeyInit};

use super::compound_file::u32_at;

/// The record that holds the key.
const DISTRIBUTE_DOC_DATA: u32 = 28;
const DATA_BYTES: usize = 256;

/// A `ViewText` section's records, decrypted (still compressed where the file is); an error says
/// what is wrong with its head.
pub(super) fn decrypt_section(stream: &[u8]) -> Result<Vec<u8>, String> {
    let header = u32_at(stream, 0).ok_or("the section is shorter than a record's header")?;
    let (tag, size) = (header & 0x3FF, (header >> 20) as usize);
    if tag != DISTRIBUTE_DOC_DATA || size != DATA_BYTES {
        return Err(format!(
            "its first record is not the 256-byte key record (tag {tag}, {size} bytes)"
        ));
    }
    let data = stream
        .get(4..4 + DATA_BYTES)
        .ok_or("the key record runs past the section's end")?;
    let key = key_of(data.try_into().expect("256 bytes"));
    let cipher = aes::Aes128::new(GenericArray::from_slice(&key));
    let mut rest = stream[4 + DATA_BYTES..].to_vec();
    rest.truncate(rest.len() / 16 * 16);
    for block in rest.chunks_exact_mut(16) {
        cipher.decrypt_block(GenericArray::from_mut_slice(block));
    }
    Ok(rest)
}

/// The key the record masks: its bytes past the seed XORed with `rand()`'s values, each kept for
/// 1 to 16 bytes as `rand()` says; the key is 16 bytes from `4 + seed % 16`.
fn key_of(data: &[u8; DATA_BYTES]) -> [u8; 16] {
    let seed = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let mut random = MsvcRandom(seed);
    let mut unmasked = *data;
    let (mut mask, mut left) = (0u8, 0u32);
    for (i, byte) in unmasked.iter_mut().enumerate() {
        if left == 0 {
            mask = (random.next() & 0xFF) as u8;
            left = (random.next() & 0xF) + 1;
        }
        if i >= 4 {
            *byte ^= mask;
        }
        left -= 1;
    }
    let at = 4 + (seed & 0xF) as usize;
    unmasked[at..at + 16].try_into().expect("16 bytes within 256")
}

/// MSVC's `srand`/`rand`: a linear congruential generator, 15 bits a value.
struct MsvcRandom(u32);

impl MsvcRandom {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(214_013).wrapping_add(2_531_011);
        (self.0 >> 16) & 0x7FFF
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use aes::cipher::generic_array::GenericArray;
    use aes::cipher::{BlockEncrypt, KeyInit};

    /// `records` (compressed or not) encrypted as a distribution document's section with `key`,
    /// behind the key record that masks it with `seed`.
    pub fn encrypted_section(records: &[u8], key: [u8; 16], seed: u32) -> Vec<u8> {
        // The record's bytes are masked by XOR: masking the plain bytes unmasks them.
        let mut data = [0u8; super::DATA_BYTES];
        data[..4].copy_from_slice(&seed.to_le_bytes());
        let at = 4 + (seed & 0xF) as usize;
        data[at..at + 16].copy_from_slice(&key);
        let masked_key = super::key_of(&data);
        data[at..at + 16].copy_from_slice(&masked_key);
        let mut out = (super::DISTRIBUTE_DOC_DATA | (super::DATA_BYTES as u32) << 20)
            .to_le_bytes()
            .to_vec();
        out.extend_from_slice(&data);
        let mut body = records.to_vec();
        body.resize(body.len().div_ceil(16) * 16, 0);
        let cipher = aes::Aes128::new(GenericArray::from_slice(&key));
        for block in body.chunks_exact_mut(16) {
            cipher.encrypt_block(GenericArray::from_mut_slice(block));
        }
        out.extend(body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_msvcs_and_a_masked_key_is_read_back() {
        // MSVC: srand(1); rand() gives 41, 18467, 6334.
        let mut random = MsvcRandom(1);
        assert_eq!([random.next(), random.next(), random.next()], [41, 18467, 6334]);
        let key = *b"0123456789abcdef";
        for seed in [0u32, 7, 0xDEAD_BEEF] {
            let section = fixtures::encrypted_section(b"sixteen bytes...", key, seed);
            assert_eq!(decrypt_section(&section).unwrap(), b"sixteen bytes...", "seed {seed}");
        }
        assert!(decrypt_section(b"\x42\x00\x60\x01")
            .unwrap_err()
            .contains("not the 256-byte key record"));
        assert!(decrypt_section(&[28, 0, 0, 0x10]).unwrap_err().contains("runs past"));
    }
}
