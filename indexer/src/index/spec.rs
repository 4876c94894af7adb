//! Which vector index to build, with its parameters, and the default for a corpus size.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{IndexerError, Result};

/// The index and its parameters, as recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum IndexSpec {
    /// Exact inner-product search.
    Flat,
    Hnsw {
        m: usize,
        ef_construction: usize,
        ef_search: usize,
        /// Who built the links (an index recorded before the choice existed: FAISS).
        #[serde(default = "HnswBuilder::recorded_default")]
        builder: HnswBuilder,
    },
    IvfFlat {
        nlist: usize,
        nprobe: usize,
        train_sample: usize,
        /// Who computed the centroids (FAISS's own training, or quarry's k-means kernel).
        #[serde(default)]
        trainer: IvfTrainer,
    },
    IvfPq {
        nlist: usize,
        nprobe: usize,
        pq_m: usize,
        nbits: usize,
        train_sample: usize,
    },
}

impl IndexSpec {
    /// The FAISS index-factory string.
    pub fn factory(&self) -> String {
        match self {
            Self::Flat => "Flat".into(),
            Self::Hnsw { m, .. } => format!("HNSW{m},Flat"),
            Self::IvfFlat { nlist, .. } => format!("IVF{nlist},Flat"),
            // `np`: no polysemous training (slow, and only useful for Hamming filtering).
            Self::IvfPq { nlist, pq_m, nbits, .. } => format!("IVF{nlist},PQ{pq_m}x{nbits}np"),
        }
    }

    /// Whether the index keeps every vector whole, so that the scores it answers with are
    /// the exact inner products (up to the order of the sums): all but product quantization.
    pub fn scores_exactly(&self) -> bool {
        !matches!(self, Self::IvfPq { .. })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Hnsw { .. } => "hnsw",
            Self::IvfFlat { .. } => "ivf-flat",
            Self::IvfPq { .. } => "ivf-pq",
        }
    }
}

/// Who builds an IVF index: FAISS alone, or quarry's vector kernels (CUDA in a `cuda` build
/// with a GPU, else the CPU twins), which train the centroids and assign every row to its
/// list before FAISS takes both. `Auto` (the default) is the kernels when they run on a GPU
/// (22× faster than FAISS on an H100 machine's 16 cores, same recall) and FAISS otherwise
/// (2.3× faster than the CPU twins on the 2-core AMD EPYC box); bench/RESULTS.md has both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IvfTrainer {
    #[default]
    Auto,
    Faiss,
    Kernels,
}

/// What `auto` settles on: `on_gpu` where the run's vector kernels are on a GPU, else `on_cpu`.
fn by_kernels_device<T>(on_gpu: T, on_cpu: T) -> T {
    match super::vector_kernels().is_gpu() {
        true => on_gpu,
        false => on_cpu,
    }
}

impl IvfTrainer {
    /// `Auto` settled for the device of the run's vector kernels; the others as they are.
    pub fn resolved(self) -> Self {
        match self {
            Self::Auto => by_kernels_device(Self::Kernels, Self::Faiss),
            chosen => chosen,
        }
    }
}

impl FromStr for IvfTrainer {
    type Err = IndexerError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "faiss" => Ok(Self::Faiss),
            "kernels" | "quarry" => Ok(Self::Kernels),
            other => Err(IndexerError::Config(format!(
                "unknown IVF trainer `{other}` (auto, faiss, kernels)"
            ))),
        }
    }
}

/// Who builds an HNSW index: FAISS, inserting row by row on the CPU, or quarry's graph
/// build (`index/graph/`): kNN lists from the vector kernels, CAGRA's pruning, written as
/// FAISS's own HNSW file. `Auto` (the default) is the graph build when the kernels run on a
/// GPU and FAISS otherwise (on the CPU the graph build is faster, but its 64 links a row
/// answer fewer queries a second at the default efSearch: bench/RESULTS.md, "Which HNSW
/// builder without a GPU"). Either index is searched by FAISS the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HnswBuilder {
    #[default]
    Auto,
    Faiss,
    Graph,
}

impl HnswBuilder {
    /// `Auto` settled for the device of the run's vector kernels; the others as they are.
    pub fn resolved(self) -> Self {
        match self {
            Self::Auto => by_kernels_device(Self::Graph, Self::Faiss),
            chosen => chosen,
        }
    }

    /// What a manifest without the field means: FAISS built every HNSW index then.
    fn recorded_default() -> Self {
        Self::Faiss
    }
}

impl FromStr for HnswBuilder {
    type Err = IndexerError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "faiss" => Ok(Self::Faiss),
            "graph" => Ok(Self::Graph),
            other => Err(IndexerError::Config(format!(
                "unknown HNSW builder `{other}` (auto, faiss, graph)"
            ))),
        }
    }
}

/// `--index auto|flat|hnsw|ivf-flat|ivf-pq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexKind {
    #[default]
    Auto,
    Flat,
    Hnsw,
    IvfFlat,
    IvfPq,
}

impl IndexKind {
    /// The name an index of this kind has in a manifest; None for `auto` (chosen by size).
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Self::Auto => None,
            Self::Flat => Some("flat"),
            Self::Hnsw => Some("hnsw"),
            Self::IvfFlat => Some("ivf-flat"),
            Self::IvfPq => Some("ivf-pq"),
        }
    }
}

impl FromStr for IndexKind {
    type Err = IndexerError;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "auto" => Self::Auto,
            "flat" => Self::Flat,
            "hnsw" => Self::Hnsw,
            "ivf-flat" | "ivf" => Self::IvfFlat,
            "ivf-pq" => Self::IvfPq,
            other => {
                return Err(IndexerError::Config(format!(
                    "unknown index kind `{other}` (auto, flat, hnsw, ivf-flat, ivf-pq)"
                )))
            }
        })
    }
}

/// The user's index choice; unset parameters take defaults sized to the corpus.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    pub kind: IndexKind,
    pub hnsw_m: Option<usize>,
    pub ef_construction: Option<usize>,
    pub ef_search: Option<usize>,
    pub nlist: Option<usize>,
    pub nprobe: Option<usize>,
    pub pq_m: Option<usize>,
    pub train_sample: Option<usize>,
    pub ivf_trainer: IvfTrainer,
    pub hnsw_builder: HnswBuilder,
}

/// Below this many vectors exact search is cheap enough to be the default.
pub const FLAT_MAX_ROWS: usize = 20_000;
/// Below this many vectors HNSW is the default; above it IVF (faster to build, less memory).
pub const HNSW_MAX_ROWS: usize = 2_000_000;

impl IndexOptions {
    /// The index of a segment added beside a snapshot's others (a nightly delta, a merge of
    /// small segments): exact search while it is small, whatever the kind; above that the
    /// choice resolved for its rows, an explicit `nlist` larger than its rows left to the
    /// default for them (the snapshot's big segment keeps the one asked for), so that a
    /// small merge never fails on options sized for the whole corpus.
    pub fn resolve_segment(&self, rows: usize, dim: usize) -> Result<IndexSpec> {
        if rows < FLAT_MAX_ROWS {
            return Ok(IndexSpec::Flat);
        }
        let fitting = IndexOptions {
            nlist: self.nlist.filter(|&nlist| nlist <= rows),
            ..self.clone()
        };
        fitting.resolve(rows, dim)
    }

    /// Refuses parameters no index can be built or searched with, naming the option (FAISS
    /// would crash on an HNSW graph without links, or fail its first search on zero lists).
    /// Checked before a run embeds anything, and again by every [`IndexOptions::resolve`].
    pub fn validate(&self) -> Result<()> {
        let least = [
            ("--hnsw-m", self.hnsw_m, 2),
            ("--ef-construction", self.ef_construction, 1),
            ("--ef-search", self.ef_search, 1),
            ("--nlist", self.nlist, 1),
            ("--nprobe", self.nprobe, 1),
            ("--pq-m", self.pq_m, 1),
            ("--train-sample", self.train_sample, 1),
        ];
        match least
            .into_iter()
            .find(|&(_, value, min)| value.is_some_and(|value| value < min))
        {
            Some((option, Some(value), min)) => Err(IndexerError::Config(format!(
                "{option} {value}: must be at least {min}"
            ))),
            _ => Ok(()),
        }
    }

    /// Resolves the choice for `rows` vectors of `dim` dimensions, checking the parameters fit.
    pub fn resolve(&self, rows: usize, dim: usize) -> Result<IndexSpec> {
        self.validate()?;
        let kind = match self.kind {
            IndexKind::Auto if rows < FLAT_MAX_ROWS => IndexKind::Flat,
            IndexKind::Auto if rows < HNSW_MAX_ROWS => IndexKind::Hnsw,
            IndexKind::Auto => IndexKind::IvfFlat,
            explicit => explicit,
        };
        let nlist = self
            .nlist
            .unwrap_or_else(|| ((4.0 * (rows as f64).sqrt()) as usize).clamp(1, 65_536));
        let nprobe = self.nprobe.unwrap_or((nlist / 16).clamp(1, 256)).min(nlist);
        let train_sample = self.train_sample.unwrap_or(nlist * 256).min(rows);
        if matches!(kind, IndexKind::IvfFlat | IndexKind::IvfPq) && train_sample < nlist {
            return Err(IndexerError::Config(format!(
                "IVF with nlist={nlist} needs at least {nlist} training vectors, the corpus has {rows} (lower --nlist or use --index flat/hnsw)"
            )));
        }
        Ok(match kind {
            IndexKind::Auto | IndexKind::Flat => IndexSpec::Flat,
            IndexKind::Hnsw => IndexSpec::Hnsw {
                m: self.hnsw_m.unwrap_or(32),
                ef_construction: self.ef_construction.unwrap_or(200),
                ef_search: self.ef_search.unwrap_or(128),
                builder: self.hnsw_builder.resolved(),
            },
            IndexKind::IvfFlat => IndexSpec::IvfFlat {
                nlist,
                nprobe,
                train_sample,
                trainer: self.ivf_trainer.resolved(),
            },
            IndexKind::IvfPq => {
                let pq_m = self.pq_m.unwrap_or(dim / 8);
                if pq_m == 0 || !dim.is_multiple_of(pq_m) {
                    return Err(IndexerError::Config(format!(
                        "--pq-m {pq_m} must divide the dimension {dim}"
                    )));
                }
                if train_sample < 256 {
                    return Err(IndexerError::Config(format!(
                        "IVF-PQ needs at least 256 training vectors, has {train_sample}"
                    )));
                }
                IndexSpec::IvfPq {
                    nlist,
                    nprobe,
                    pq_m,
                    nbits: 8,
                    train_sample,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_follows_corpus_size() {
        let auto = IndexOptions::default();
        assert_eq!(auto.resolve(100, 384).unwrap(), IndexSpec::Flat);
        assert!(matches!(
            auto.resolve(50_000, 384).unwrap(),
            IndexSpec::Hnsw { m: 32, .. }
        ));
        match auto.resolve(4_000_000, 384).unwrap() {
            IndexSpec::IvfFlat { nlist, nprobe, .. } => assert_eq!((nlist, nprobe), (8000, 256)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_added_segment_is_exact_while_small_and_never_fails_on_corpus_sized_lists() {
        let ivf = IndexOptions {
            kind: IndexKind::IvfFlat,
            nlist: Some(4096),
            ..Default::default()
        };
        assert!(
            ivf.resolve(500, 384).is_err(),
            "the whole-corpus rule refuses 500 rows for 4096 lists"
        );
        assert_eq!(ivf.resolve_segment(500, 384).unwrap(), IndexSpec::Flat);
        assert!(matches!(
            ivf.resolve_segment(100_000, 384).unwrap(),
            IndexSpec::IvfFlat { nlist: 4096, .. }
        ));
        let too_many = IndexOptions {
            nlist: Some(65_536),
            ..ivf.clone()
        };
        assert!(matches!(
            too_many.resolve_segment(30_000, 384).unwrap(),
            IndexSpec::IvfFlat { nlist: 692, .. }
        ));
        let hnsw = IndexOptions {
            kind: IndexKind::Hnsw,
            ..Default::default()
        };
        assert_eq!(hnsw.resolve_segment(FLAT_MAX_ROWS - 1, 384).unwrap(), IndexSpec::Flat);
        assert!(matches!(
            hnsw.resolve_segment(FLAT_MAX_ROWS, 384).unwrap(),
            IndexSpec::Hnsw { .. }
        ));
    }

    #[test]
    fn bad_parameters_are_explained() {
        let ivf = IndexOptions {
            kind: IndexKind::IvfFlat,
            nlist: Some(100),
            ..Default::default()
        };
        assert!(ivf
            .resolve(50, 384)
            .unwrap_err()
            .to_string()
            .contains("needs at least 100"));
        let pq = IndexOptions {
            kind: IndexKind::IvfPq,
            pq_m: Some(7),
            ..Default::default()
        };
        assert!(pq.resolve(10_000, 384).unwrap_err().to_string().contains("must divide"));
        assert_eq!(
            IndexSpec::IvfPq {
                nlist: 64,
                nprobe: 8,
                pq_m: 48,
                nbits: 8,
                train_sample: 1
            }
            .factory(),
            "IVF64,PQ48x8np"
        );
    }

    #[test]
    fn the_default_ivf_trainer_is_settled_for_the_device_before_it_is_recorded() {
        let ivf = IndexOptions {
            kind: IndexKind::IvfFlat,
            ..Default::default()
        };
        assert_eq!("auto".parse::<IvfTrainer>().unwrap(), ivf.ivf_trainer);
        let settled = match ivf.resolve(100_000, 384).unwrap() {
            IndexSpec::IvfFlat { trainer, .. } => trainer,
            other => panic!("{other:?}"),
        };
        // A CPU build's kernels are the CPU twins, which train far slower than FAISS.
        #[cfg(not(feature = "cuda"))]
        assert_eq!(settled, IvfTrainer::Faiss);
        assert_ne!(settled, IvfTrainer::Auto, "a manifest records who trained");
        for chosen in [IvfTrainer::Faiss, IvfTrainer::Kernels] {
            assert!(
                matches!(IndexOptions { ivf_trainer: chosen, ..ivf.clone() }.resolve(100_000, 384).unwrap(), IndexSpec::IvfFlat { trainer, .. } if trainer == chosen)
            );
        }
    }

    #[test]
    fn the_hnsw_builder_is_settled_for_the_device_and_old_manifests_read_as_faiss() {
        let hnsw = IndexOptions {
            kind: IndexKind::Hnsw,
            ..Default::default()
        };
        let builder_of = |options: &IndexOptions| match options.resolve(100_000, 384).unwrap() {
            IndexSpec::Hnsw { builder, .. } => builder,
            other => panic!("{other:?}"),
        };
        #[cfg(not(feature = "cuda"))]
        assert_eq!(builder_of(&hnsw), HnswBuilder::Faiss, "FAISS's insertion without a GPU");
        assert_ne!(builder_of(&hnsw), HnswBuilder::Auto, "a manifest records who built");
        for chosen in [HnswBuilder::Faiss, HnswBuilder::Graph] {
            let options = IndexOptions {
                hnsw_builder: chosen,
                ..hnsw.clone()
            };
            assert_eq!(builder_of(&options), chosen);
        }
        let recorded: IndexSpec =
            serde_json::from_str(r#"{"kind": "hnsw", "m": 32, "ef_construction": 200, "ef_search": 128}"#).unwrap();
        assert!(matches!(
            recorded,
            IndexSpec::Hnsw {
                builder: HnswBuilder::Faiss,
                ..
            }
        ));
        assert_eq!("graph".parse::<HnswBuilder>().unwrap(), HnswBuilder::Graph);
        let error = "cagra".parse::<HnswBuilder>().unwrap_err().to_string();
        assert!(
            error.contains("unknown HNSW builder `cagra` (auto, faiss, graph)"),
            "{error}"
        );
    }

    #[test]
    fn parameters_no_index_can_use_are_refused_by_name() {
        let refused = |options: IndexOptions, message: &str| {
            let error = options.resolve(100_000, 384).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
            assert_eq!(options.validate().unwrap_err().to_string(), error);
        };
        let hnsw = IndexOptions {
            kind: IndexKind::Hnsw,
            ..Default::default()
        };
        refused(
            IndexOptions {
                hnsw_m: Some(1),
                ..hnsw.clone()
            },
            "--hnsw-m 1: must be at least 2",
        );
        refused(
            IndexOptions {
                ef_construction: Some(0),
                ..hnsw.clone()
            },
            "--ef-construction 0: must be at least 1",
        );
        refused(
            IndexOptions {
                ef_search: Some(0),
                ..hnsw.clone()
            },
            "--ef-search 0: must be at least 1",
        );
        let ivf = IndexOptions {
            kind: IndexKind::IvfFlat,
            ..Default::default()
        };
        refused(
            IndexOptions {
                nlist: Some(0),
                ..ivf.clone()
            },
            "--nlist 0: must be at least 1",
        );
        refused(
            IndexOptions {
                nprobe: Some(0),
                ..ivf.clone()
            },
            "--nprobe 0: must be at least 1",
        );
        refused(
            IndexOptions {
                train_sample: Some(0),
                ..ivf.clone()
            },
            "--train-sample 0: must be at least 1",
        );
        refused(
            IndexOptions {
                kind: IndexKind::IvfPq,
                pq_m: Some(0),
                ..ivf.clone()
            },
            "--pq-m 0: must be at least 1",
        );
        // The least values that make sense are accepted, whatever the kind.
        let least = IndexOptions {
            hnsw_m: Some(2),
            ef_construction: Some(1),
            ef_search: Some(1),
            nlist: Some(1),
            nprobe: Some(1),
            train_sample: Some(1),
            pq_m: Some(1),
            ..Default::default()
        };
        assert!(least.validate().is_ok());
        assert!(matches!(
            IndexOptions {
                kind: IndexKind::Hnsw,
                ..least.clone()
            }
            .resolve(100_000, 384)
            .unwrap(),
            IndexSpec::Hnsw { m: 2, .. }
        ));
        assert!(matches!(
            IndexOptions {
                kind: IndexKind::IvfFlat,
                ..least
            }
            .resolve(100_000, 384)
            .unwrap(),
            IndexSpec::IvfFlat {
                nlist: 1,
                nprobe: 1,
                ..
            }
        ));
    }
}
