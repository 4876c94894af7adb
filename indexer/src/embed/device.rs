//! `--device auto|cpu|cuda[:N]`: parsed once, resolved to a candle device at start-up.

use std::str::FromStr;

use crate::error::{IndexerError, Result};

/// Which device runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceSpec {
    /// CUDA when compiled in and a GPU is present, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda(usize),
}

impl FromStr for DeviceSpec {
    type Err = IndexerError;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" | "gpu" => Ok(Self::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| IndexerError::Device(format!("unknown device `{s}` (expected auto, cpu, cuda or cuda:N)"))),
        }
    }
}

impl DeviceSpec {
    /// The candle device for this spec.
    pub fn resolve(self) -> Result<candle_core::Device> {
        match self {
            Self::Cpu => Ok(candle_core::Device::Cpu),
            #[cfg(feature = "cuda")]
            Self::Auto => Ok(candle_core::Device::cuda_if_available(0).unwrap_or(candle_core::Device::Cpu)),
            #[cfg(not(feature = "cuda"))]
            Self::Auto => Ok(candle_core::Device::Cpu),
            #[cfg(feature = "cuda")]
            Self::Cuda(ordinal) => candle_core::Device::new_cuda(ordinal)
                .map_err(|e| IndexerError::Device(format!("cannot open cuda:{ordinal}: {e}"))),
            #[cfg(not(feature = "cuda"))]
            Self::Cuda(_) => Err(IndexerError::Device(
                "this quarry binary was built without CUDA support; rebuild with `cargo build --release --features cuda`, or use --device cpu".into(),
            )),
        }
    }
}

/// Free and total memory of a CUDA device, in bytes (`None` on the CPU).
#[cfg(feature = "cuda")]
pub fn gpu_memory(device: &candle_core::Device) -> Option<(usize, usize)> {
    match device {
        candle_core::Device::Cuda(cuda) => cuda.cuda_stream().context().mem_get_info().ok(),
        _ => None,
    }
}

/// Free and total memory of a CUDA device, in bytes (`None` on the CPU).
#[cfg(not(feature = "cuda"))]
pub fn gpu_memory(_device: &candle_core::Device) -> Option<(usize, usize)> {
    None
}

/// A short name for a candle device, for logs and manifests.
pub fn device_name(device: &candle_core::Device) -> String {
    match device.location() {
        candle_core::DeviceLocation::Cpu => "cpu".into(),
        candle_core::DeviceLocation::Cuda { gpu_id } => format!("cuda:{gpu_id}"),
        candle_core::DeviceLocation::Metal { gpu_id } => format!("metal:{gpu_id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_names() {
        assert_eq!("auto".parse::<DeviceSpec>().unwrap(), DeviceSpec::Auto);
        assert_eq!("CPU".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cpu);
        assert_eq!("cuda:1".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(1));
        assert!("tpu".parse::<DeviceSpec>().is_err());
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_is_a_clear_error() {
        let err = DeviceSpec::Cuda(0).resolve().unwrap_err().to_string();
        assert!(err.contains("built without CUDA support"), "{err}");
        assert!(matches!(DeviceSpec::Auto.resolve().unwrap(), candle_core::Device::Cpu));
    }
}
