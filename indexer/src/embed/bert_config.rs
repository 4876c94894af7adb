//! A BERT-family model's config.json: the sizes and settings quarry's encoder is built from.
//! Read here rather than through candle-transformers' `Config` (which ties the build to the
//! whole candle-transformers crate and its models): the fields the encoder reads (that one also
//! required dropout and initializer settings, which nothing reads at inference), and the
//! activations the Hugging Face configs name (`gelu_new`, `gelu_pytorch_tanh` and `gelu_fast`
//! are the tanh GELU).

use serde::Deserialize;

/// The feed-forward layers' activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum HiddenAct {
    /// The exact GELU (erf).
    #[serde(rename = "gelu", alias = "gelu_python")]
    Gelu,
    /// GELU's tanh approximation.
    #[serde(
        rename = "gelu_new",
        alias = "gelu_pytorch_tanh",
        alias = "gelu_fast",
        alias = "geluapproximate"
    )]
    GeluApproximate,
    #[serde(rename = "relu")]
    Relu,
}

/// How positions are embedded: absolute positions alone are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PositionEmbeddingType {
    #[default]
    Absolute,
}

/// The fields of config.json the encoder reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: HiddenAct,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub pad_token_id: usize,
    #[serde(default)]
    pub position_embedding_type: PositionEmbeddingType,
    #[serde(default)]
    pub model_type: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(hidden_act: &str, extra: &str) -> serde_json::Result<BertConfig> {
        serde_json::from_str(&format!(
            r#"{{"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
            "intermediate_size": 1536, "hidden_act": "{hidden_act}", "max_position_embeddings": 512,
            "type_vocab_size": 2, "layer_norm_eps": 1e-12 {extra}}}"#
        ))
    }

    #[test]
    fn the_activations_hugging_face_configs_name_are_read() {
        let read = |name| config(name, "").map(|c| c.hidden_act).ok();
        assert_eq!(read("gelu"), Some(HiddenAct::Gelu));
        assert_eq!(read("relu"), Some(HiddenAct::Relu));
        for approximate in ["gelu_new", "gelu_pytorch_tanh", "gelu_fast", "geluapproximate"] {
            assert_eq!(read(approximate), Some(HiddenAct::GeluApproximate), "{approximate}");
        }
        assert_eq!(read("swish"), None);
    }

    #[test]
    fn defaults_and_refusals() {
        let plain = config("gelu", "").unwrap();
        assert_eq!((plain.pad_token_id, plain.model_type), (0, None));
        let roberta = config("gelu", r#", "pad_token_id": 1, "model_type": "xlm-roberta""#).unwrap();
        assert_eq!(
            (roberta.pad_token_id, roberta.model_type.as_deref()),
            (1, Some("xlm-roberta"))
        );
        let relative = config("gelu", r#", "position_embedding_type": "relative_key""#).unwrap_err();
        assert!(relative.to_string().contains("relative_key"), "{relative}");
        let missing = serde_json::from_str::<BertConfig>(r#"{"vocab_size": 10}"#).unwrap_err();
        assert!(missing.to_string().contains("hidden_size"), "{missing}");
    }
}
