//! A dense layer's product `x · Wᵀ` in bfloat16 on the CPU: both sides rounded to bf16 (8-bit
//! mantissa, f32's range), every sum kept in f32, by the AVX512-BF16 dot-product instruction
//! (`vdpbf16ps`: 16 lanes, each adding two products of bf16 pairs to an f32 sum), which does
//! twice the arithmetic of an f32 FMA per instruction. The weights are packed once, at model
//! load ([`Bf16Weights::pack`]); each product rounds `x` and runs tiles of [`TILE_ROWS`] rows ×
//! [`PANEL`] outputs in registers. [`bf16_products_native`] says whether this CPU has the
//! instruction; without it [`Bf16Weights::product`] computes the same rounded products in
//! portable code (slow: the embedder then keeps f32 instead, see `indexer/src/embed`).

use std::mem::MaybeUninit;

use rayon::prelude::*;

/// Outputs per packed panel: two 16-lane vectors.
const PANEL: usize = 32;
/// Rows of `x` per register tile (12 rows × 2 vectors = 24 of the 32 vector registers).
const TILE_ROWS: usize = 12;
/// Rows of `x` per parallel task at most (a multiple of [`TILE_ROWS`]).
const ROWS_PER_TASK: usize = 8 * TILE_ROWS;

/// Whether this CPU runs the bf16 product natively (AVX512-BF16).
pub fn bf16_products_native() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `value` rounded to the nearest bf16 (ties to even), as its 16 bits; NaN stays NaN.
fn to_bf16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

/// The f32 a bf16's bits stand for (exact).
fn from_bf16_bits(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// Two consecutive values of a row as one word of bf16 pairs (the first in the low half), the
/// operand layout of `vdpbf16ps`.
fn pair(first: f32, second: f32) -> u32 {
    to_bf16_bits(first) as u32 | (to_bf16_bits(second) as u32) << 16
}

/// One row as words of bf16 pairs (`words`: half the row, rounded up; a last odd value is
/// paired with a zero).
fn round_row(row: &[f32], words: &mut [MaybeUninit<u32>]) {
    for (i, word) in words.iter_mut().enumerate() {
        word.write(pair(row[2 * i], row.get(2 * i + 1).copied().unwrap_or(0.0)));
    }
}

/// A dense layer's weights `W` `[outputs, inputs]`, rounded to bf16 and packed in panels of
/// [`PANEL`] outputs: panel `p` holds, for each pair of inputs `(2i, 2i + 1)`, the [`PANEL`]
/// words `pair(W[o][2i], W[o][2i + 1])` for its outputs `o` (zeros past the last output and
/// the last input).
pub struct Bf16Weights {
    outputs: usize,
    inputs: usize,
    packed: Vec<u32>,
}

impl Bf16Weights {
    /// Packs row-major `weights` of `inputs` columns.
    pub fn pack(weights: &[f32], inputs: usize) -> Self {
        assert!(
            inputs > 0 && weights.len().is_multiple_of(inputs),
            "{} weights are not rows of {inputs}",
            weights.len()
        );
        let outputs = weights.len() / inputs;
        let pairs = inputs.div_ceil(2);
        let value = |o: usize, i: usize| {
            if o < outputs && i < inputs {
                weights[o * inputs + i]
            } else {
                0.0
            }
        };
        let mut packed = vec![0u32; outputs.div_ceil(PANEL) * pairs * PANEL];
        packed
            .par_chunks_mut(pairs * PANEL)
            .enumerate()
            .for_each(|(panel, words)| {
                for (i, pair_words) in words.chunks_exact_mut(PANEL).enumerate() {
                    for (lane, word) in pair_words.iter_mut().enumerate() {
                        let o = panel * PANEL + lane;
                        *word = pair(value(o, 2 * i), value(o, 2 * i + 1));
                    }
                }
            });
        Self {
            outputs,
            inputs,
            packed,
        }
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    fn pairs(&self) -> usize {
        self.inputs.div_ceil(2)
    }

    /// `out[r * outputs + o]` = row `r` of `x` · row `o` of `W`, both rounded to bf16, summed in
    /// f32: the product without its bias, row-major `[rows, outputs]`.
    pub fn product(&self, x: &[f32]) -> Vec<f32> {
        assert!(
            x.len().is_multiple_of(self.inputs),
            "{} values are not rows of {}",
            x.len(),
            self.inputs
        );
        let rows = x.len() / self.inputs;
        let values = rows * self.outputs;
        // Every value is stored once below: no zeros written first (on the calling thread,
        // while the pool's threads wait).
        let mut out: Vec<f32> = Vec::with_capacity(values);
        if values == 0 {
            return out;
        }
        let rounded = self.round_rows(x);
        self.product_into(&rounded, rows, &mut out.spare_capacity_mut()[..values]);
        // SAFETY: `product_into` wrote all `values` values (every row, every output).
        unsafe { out.set_len(values) };
        out
    }

    /// `rounded` (`rows` rows from [`Self::round_rows`]) times the weights, every value of
    /// `out` `[rows, outputs]` written.
    fn product_into(&self, rounded: &[u32], rows: usize, out: &mut [MaybeUninit<f32>]) {
        let pairs = self.pairs();
        let threads = rayon::current_num_threads();
        if rows.div_ceil(TILE_ROWS) >= 2 * threads {
            // Enough tasks for every thread several times over, whole tiles each.
            let per_task = rows
                .div_ceil(4 * threads)
                .next_multiple_of(TILE_ROWS)
                .clamp(TILE_ROWS, ROWS_PER_TASK);
            out.par_chunks_mut(per_task * self.outputs)
                .zip(rounded.par_chunks(per_task * pairs))
                .for_each(|(out, rows)| {
                    rows_times_panels(rows, pairs, &self.packed, self.outputs, out);
                });
            return;
        }
        // Few rows (a query's tokens): the tasks split the outputs instead, each filling a part
        // of its own columns, placed afterwards.
        let panels_per_task = self.outputs.div_ceil(PANEL).div_ceil(4 * threads).max(1);
        let columns_per_task = panels_per_task * PANEL;
        let parts: Vec<Vec<MaybeUninit<f32>>> = self
            .packed
            .par_chunks(panels_per_task * pairs * PANEL)
            .enumerate()
            .map(|(task, panels)| {
                let columns = (self.outputs - task * columns_per_task).min(columns_per_task);
                let mut part = vec![MaybeUninit::new(0f32); rows * columns];
                rows_times_panels(rounded, pairs, panels, columns, &mut part);
                part
            })
            .collect();
        for (task, part) in parts.iter().enumerate() {
            let columns = part.len() / rows;
            for (out, part) in out.chunks_exact_mut(self.outputs).zip(part.chunks_exact(columns)) {
                out[task * columns_per_task..][..columns].copy_from_slice(part);
            }
        }
    }

    /// `x`'s rows as words of bf16 pairs (`pairs` per row, the last padded with a zero).
    fn round_rows(&self, x: &[f32]) -> Vec<u32> {
        let pairs = self.pairs();
        let words = x.len() / self.inputs * pairs;
        // Every word is stored once below: no zeros written first (see `product`).
        let mut rounded: Vec<u32> = Vec::with_capacity(words);
        let native = bf16_products_native();
        rounded.spare_capacity_mut()[..words]
            .par_chunks_mut(pairs * 64)
            .zip(x.par_chunks(self.inputs * 64))
            .for_each(|(words, x)| {
                for (words, row) in words.chunks_exact_mut(pairs).zip(x.chunks_exact(self.inputs)) {
                    #[cfg(target_arch = "x86_64")]
                    if native {
                        // SAFETY: the CPU has AVX-512F and AVX512-BF16 (checked above).
                        unsafe { native::round_row(row, words) };
                        continue;
                    }
                    let _ = native;
                    round_row(row, words);
                }
            });
        // SAFETY: every row's `pairs` words were stored above (the rows cover `x`).
        unsafe { rounded.set_len(words) };
        rounded
    }
}

/// `out` `[rows, outputs]` = `rows` (words of bf16 pairs, `pairs` per row) times the packed
/// `panels` (holding `outputs` outputs), natively where the CPU can.
fn rows_times_panels(rows: &[u32], pairs: usize, panels: &[u32], outputs: usize, out: &mut [MaybeUninit<f32>]) {
    #[cfg(target_arch = "x86_64")]
    if bf16_products_native() {
        // SAFETY: the CPU has AVX-512F and AVX512-BF16 (checked above); the slices hold whole
        // rows of `pairs` words and of `outputs` values, and the panels `outputs` outputs.
        return unsafe { native::rows_times_panels(rows, pairs, panels, outputs, out) };
    }
    rows_times_panels_portable(rows, pairs, panels, outputs, out);
}

/// [`rows_times_panels`] in portable code, one output at a time.
fn rows_times_panels_portable(
    rows: &[u32],
    pairs: usize,
    panels: &[u32],
    outputs: usize,
    out: &mut [MaybeUninit<f32>],
) {
    for (row, out) in rows.chunks_exact(pairs).zip(out.chunks_exact_mut(outputs)) {
        for (o, value) in out.iter_mut().enumerate() {
            let panel = &panels[o / PANEL * pairs * PANEL..][..pairs * PANEL];
            let mut sum = 0f32;
            for (i, &a) in row.iter().enumerate() {
                let w = panel[i * PANEL + o % PANEL];
                sum += from_bf16_bits(a as u16) * from_bf16_bits(w as u16)
                    + from_bf16_bits((a >> 16) as u16) * from_bf16_bits((w >> 16) as u16);
            }
            value.write(sum);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod native {
    use std::arch::x86_64::*;

    use std::mem::MaybeUninit;

    use super::{PANEL, TILE_ROWS};

    /// [`super::round_row`] sixteen pairs at a time (`vcvtne2ps2bf16`: to nearest, ties to
    /// even, as the portable rounding).
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn round_row(row: &[f32], words: &mut [MaybeUninit<u32>]) {
        let vectors = row.len() / 32;
        for v in 0..vectors {
            let low = _mm512_loadu_ps(row.as_ptr().add(v * 32));
            let high = _mm512_loadu_ps(row.as_ptr().add(v * 32 + 16));
            let rounded: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(high, low));
            _mm512_storeu_si512(words.as_mut_ptr().add(v * 16) as *mut _, rounded);
        }
        super::round_row(&row[vectors * 32..], &mut words[vectors * 16..]);
    }

    /// Every output of `rows` (words of bf16 pairs, `pairs` per row) against every panel.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn rows_times_panels(
        rows: &[u32],
        pairs: usize,
        packed: &[u32],
        outputs: usize,
        out: &mut [MaybeUninit<f32>],
    ) {
        let row_count = rows.len() / pairs;
        for (panel, weights) in packed.chunks_exact(pairs * PANEL).enumerate() {
            let columns = (outputs - panel * PANEL).min(PANEL);
            let mut first = 0;
            while first < row_count {
                let a = rows.as_ptr().add(first * pairs);
                let c = out.as_mut_ptr().add(first * outputs + panel * PANEL) as *mut f32;
                // SAFETY (each arm): `a` has the tile's rows of `pairs` words, `weights` the
                // panel's `pairs` × PANEL words, `c` the tile's rows of `outputs` values from
                // its first column, `columns` of them in the panel.
                let tile = row_count - first;
                match tile.min(TILE_ROWS) {
                    12 => tile_rows::<12>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    11 => tile_rows::<11>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    10 => tile_rows::<10>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    9 => tile_rows::<9>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    8 => tile_rows::<8>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    7 => tile_rows::<7>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    6 => tile_rows::<6>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    5 => tile_rows::<5>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    4 => tile_rows::<4>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    3 => tile_rows::<3>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    2 => tile_rows::<2>(a, pairs, weights.as_ptr(), c, outputs, columns),
                    _ => tile_rows::<1>(a, pairs, weights.as_ptr(), c, outputs, columns),
                }
                first += tile.min(TILE_ROWS);
            }
        }
    }

    /// `ROWS` rows × one panel: for each pair of inputs, each row's pair broadcast to every
    /// lane and dotted with the panel's two vectors of weight pairs, the sums in registers;
    /// then the first `columns` of them stored.
    #[target_feature(enable = "avx512f,avx512bf16")]
    unsafe fn tile_rows<const ROWS: usize>(
        a: *const u32,
        pairs: usize,
        weights: *const u32,
        c: *mut f32,
        c_stride: usize,
        columns: usize,
    ) {
        let mut low = [_mm512_setzero_ps(); ROWS];
        let mut high = [_mm512_setzero_ps(); ROWS];
        for i in 0..pairs {
            let w_low: __m512bh = std::mem::transmute(_mm512_loadu_si512(weights.add(i * PANEL) as *const _));
            let w_high: __m512bh = std::mem::transmute(_mm512_loadu_si512(weights.add(i * PANEL + 16) as *const _));
            for r in 0..ROWS {
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(*a.add(r * pairs + i) as i32));
                low[r] = _mm512_dpbf16_ps(low[r], x, w_low);
                high[r] = _mm512_dpbf16_ps(high[r], x, w_high);
            }
        }
        let mask = |from: usize| -> __mmask16 { ((1u32 << columns.saturating_sub(from).min(16)) - 1) as __mmask16 };
        for r in 0..ROWS {
            let row = c.add(r * c_stride);
            if columns == PANEL {
                _mm512_storeu_ps(row, low[r]);
                _mm512_storeu_ps(row.add(16), high[r]);
            } else {
                _mm512_mask_storeu_ps(row, mask(0), low[r]);
                _mm512_mask_storeu_ps(row.add(16), mask(16), high[r]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(seed: usize, i: usize) -> f32 {
        ((i * 7919 + seed * 104_729) % 1013) as f32 / 507.0 - 1.0
    }

    /// The f64 sum of the bf16-rounded products.
    fn rounded_product(x: &[f32], weights: &[f32], inputs: usize, r: usize, o: usize) -> f64 {
        let round = |v: f32| from_bf16_bits(to_bf16_bits(v)) as f64;
        (0..inputs)
            .map(|i| round(x[r * inputs + i]) * round(weights[o * inputs + i]))
            .sum()
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(to_bf16_bits(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
        assert_eq!(to_bf16_bits(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(to_bf16_bits(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(from_bf16_bits(to_bf16_bits(-2.5)), -2.5);
        assert!(from_bf16_bits(to_bf16_bits(f32::NAN)).is_nan());
        assert_eq!(from_bf16_bits(to_bf16_bits(f32::INFINITY)), f32::INFINITY);
    }

    #[test]
    fn rows_round_alike_by_either_path() {
        // Ties, both signs, large and small magnitudes, infinities; 77 values: two vectors of
        // pairs and an odd tail.
        let mut row: Vec<f32> = (0..77).map(|i| draw(5, i) * 10f32.powi(i as i32 % 7 - 3)).collect();
        row[3] = 1.0 + 1.0 / 256.0;
        row[4] = -(1.0 + 3.0 / 256.0);
        row[40] = f32::INFINITY;
        row[41] = f32::NEG_INFINITY;
        let mut portable = vec![MaybeUninit::new(u32::MAX); 39];
        round_row(&row, &mut portable);
        // SAFETY: initialized above (all ones, where a word was left unwritten).
        let portable: Vec<u32> = portable.iter().map(|word| unsafe { word.assume_init() }).collect();
        assert_eq!(portable[38] >> 16, 0, "the odd last value pairs with a zero");
        #[cfg(target_arch = "x86_64")]
        if bf16_products_native() {
            let mut native = vec![MaybeUninit::new(u32::MAX); 39];
            // SAFETY: the CPU has the features (checked above); initialized (all ones) before.
            let native: Vec<u32> = unsafe {
                native::round_row(&row, &mut native);
                native.iter().map(|word| word.assume_init()).collect()
            };
            assert_eq!(native, portable);
            return;
        }
        eprintln!("this CPU has no AVX512-BF16: only the portable rounding ran");
    }

    #[test]
    fn every_entry_is_the_sum_of_rounded_products_at_odd_sizes() {
        // Rows around the tiles and the tasks (a few rows split the outputs between the tasks
        // instead of the rows), outputs around the panels, odd input counts.
        for (rows, outputs, inputs) in [
            (1, 1, 1),
            (5, 31, 7),
            (12, 32, 8),
            (13, 33, 383),
            (10, 1000, 65),
            (3, 1536, 384),
            (64, 70, 384),
            (100, 96, 1536),
            (200, 1, 3),
        ] {
            let x: Vec<f32> = (0..rows * inputs).map(|i| draw(1, i)).collect();
            let weights: Vec<f32> = (0..outputs * inputs).map(|i| draw(2, i)).collect();
            let packed = Bf16Weights::pack(&weights, inputs);
            let out = packed.product(&x);
            assert_eq!(out.len(), rows * outputs);
            for r in 0..rows {
                for o in 0..outputs {
                    let want = rounded_product(&x, &weights, inputs, r, o);
                    let got = out[r * outputs + o] as f64;
                    assert!(
                        (got - want).abs() <= 2e-5 * (1.0 + inputs as f64).sqrt() * (1.0 + want.abs()),
                        "{rows}x{outputs}x{inputs} at ({r}, {o}): {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_portable_sums_match_the_native_ones() {
        let (rows, outputs, inputs) = (37, 65, 385);
        let x: Vec<f32> = (0..rows * inputs).map(|i| draw(3, i)).collect();
        let packed = Bf16Weights::pack(&(0..outputs * inputs).map(|i| draw(4, i)).collect::<Vec<_>>(), inputs);
        let rounded = packed.round_rows(&x);
        let mut portable = vec![MaybeUninit::new(f32::NAN); rows * outputs];
        rows_times_panels_portable(&rounded, packed.pairs(), &packed.packed, outputs, &mut portable);
        // SAFETY: initialized above (NaN, where a value was left unwritten).
        let portable: Vec<f32> = portable.iter().map(|value| unsafe { value.assume_init() }).collect();
        let native = packed.product(&x);
        if !bf16_products_native() {
            eprintln!("this CPU has no AVX512-BF16: product() took the portable path itself");
        }
        for (a, b) in native.iter().zip(&portable) {
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}
