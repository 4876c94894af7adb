//! A sentence-transformers model folder: config.json, model.safetensors, tokenizer.json,
//! 1_Pooling/config.json and (optionally) sentence_bert_config.json; and where the default
//! model is looked for.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{IndexerError, Result};

/// The default model's folder name.
pub const DEFAULT_MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    Mean,
    Cls,
    Max,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// A validated model folder.
#[derive(Debug, Clone)]
pub struct ModelDir {
    pub path: PathBuf,
    pub name: String,
    pub pooling: Pooling,
    /// Window in tokens, specials included.
    pub max_tokens: usize,
    pub bert_config: super::BertConfig,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub attention_heads: usize,
    /// sha256 of the weights, computed on first use (replicas share one hash).
    weights_sha256: std::sync::Arc<std::sync::OnceLock<String>>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| IndexerError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| IndexerError::Model {
        path: path.to_path_buf(),
        reason: format!("invalid JSON: {e}"),
    })
}

/// The first position id of a text: after the padding index for RoBERTa-style models
/// (`model_type` roberta, xlm-roberta or camembert: position `pad_token_id + 1` holds the
/// first token), 0 for BERT's.
pub fn position_offset(config: &super::BertConfig) -> usize {
    match config.model_type.as_deref() {
        Some("roberta" | "xlm-roberta" | "camembert") => config.pad_token_id + 1,
        _ => 0,
    }
}

impl ModelDir {
    /// Opens and validates a model folder.
    pub fn open(path: &Path) -> Result<Self> {
        let missing = |file: &str| {
            IndexerError::Model {
            path: path.to_path_buf(),
            reason: format!("missing {file} (expected a sentence-transformers BERT folder; run scripts/fetch-model.sh for the default model)"),
        }
        };
        for file in ["config.json", "model.safetensors", "tokenizer.json"] {
            if !path.join(file).is_file() {
                return Err(missing(file));
            }
        }
        let raw_config: serde_json::Value = read_json(&path.join("config.json"))?;
        let bert_config: super::BertConfig = serde_json::from_value(raw_config).map_err(|e| IndexerError::Model {
            path: path.join("config.json"),
            reason: format!("not a BERT config: {e}"),
        })?;
        let (hidden_size, intermediate_size, attention_heads) = (
            bert_config.hidden_size,
            bert_config.intermediate_size,
            bert_config.num_attention_heads,
        );
        // RoBERTa-style models (XLM-R, multilingual-e5-base, bge-m3) count positions from after
        // the padding index: their window is that many positions shorter.
        let max_positions = bert_config
            .max_position_embeddings
            .saturating_sub(position_offset(&bert_config));
        let pooling_path = path.join("1_Pooling/config.json");
        let pooling = if pooling_path.is_file() {
            let config: PoolingConfig = read_json(&pooling_path)?;
            match (
                config.pooling_mode_mean_tokens,
                config.pooling_mode_cls_token,
                config.pooling_mode_max_tokens,
            ) {
                (true, _, _) => Pooling::Mean,
                (_, true, _) => Pooling::Cls,
                (_, _, true) => Pooling::Max,
                _ => {
                    return Err(IndexerError::Model {
                        path: pooling_path,
                        reason: "no supported pooling mode (mean, cls, max) is enabled".into(),
                    })
                }
            }
        } else {
            Pooling::Mean
        };
        let st_path = path.join("sentence_bert_config.json");
        let max_tokens = if st_path.is_file() {
            read_json::<SentenceBertConfig>(&st_path)?
                .max_seq_length
                .unwrap_or(max_positions)
        } else {
            max_positions
        }
        .min(max_positions);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(Self {
            path: path.to_path_buf(),
            name,
            pooling,
            max_tokens,
            bert_config,
            hidden_size,
            intermediate_size,
            attention_heads,
            weights_sha256: Default::default(),
        })
    }

    pub fn weights(&self) -> PathBuf {
        self.path.join("model.safetensors")
    }

    pub fn tokenizer_file(&self) -> PathBuf {
        self.path.join("tokenizer.json")
    }

    /// What a snapshot records about this model (hashes the weights).
    pub fn info(&self) -> Result<super::ModelInfo> {
        Ok(super::ModelInfo {
            name: self.name.clone(),
            sha256: self.weights_sha256()?,
            dim: self.hidden_size,
            max_tokens: self.max_tokens,
            pooling: self.pooling,
            precisions: Vec::new(),
        })
    }

    /// sha256 of model.safetensors, hex (read once per opened folder).
    pub fn weights_sha256(&self) -> Result<String> {
        if let Some(hash) = self.weights_sha256.get() {
            return Ok(hash.clone());
        }
        let hash = self.hash_weights()?;
        Ok(self.weights_sha256.get_or_init(|| hash).clone())
    }

    fn hash_weights(&self) -> Result<String> {
        let path = self.weights();
        let mut file = std::fs::File::open(&path).map_err(|e| IndexerError::io(&path, e))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buffer).map_err(|e| IndexerError::io(&path, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
        }
        Ok(hex::encode(hasher.finalize()))
    }
}

/// Where the default model is looked for, in order: `models/all-MiniLM-L6-v2` under the
/// working directory, then under the project root of the running binary
/// (`target/<profile>/quarry` -> `../../models`), then beside the binary.
pub fn default_model_dir() -> Result<PathBuf> {
    let mut candidates = vec![PathBuf::from("models").join(DEFAULT_MODEL_NAME)];
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(4) {
            candidates.push(up.join("models").join(DEFAULT_MODEL_NAME));
        }
    }
    candidates.iter().find(|c| c.join("model.safetensors").is_file()).cloned().ok_or_else(|| IndexerError::Model {
        path: candidates[0].clone(),
        reason: format!(
            "default model not found (looked in {}); run scripts/fetch-model.sh, or pass --model DIR / set QUARRY_MODEL",
            candidates.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    })
}
