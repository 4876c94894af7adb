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
    /// Several GPUs (`cuda:0,1`), one model replica each: bit N set for GPU N.
    CudaSet(u64),
}

impl FromStr for DeviceSpec {
    type Err = IndexerError;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" | "gpu" => Ok(Self::Cuda(0)),
            other => {
                let unknown = || {
                    IndexerError::Device(format!(
                        "unknown device `{s}` (expected auto, cpu, cuda, cuda:N or cuda:N,M,...)"
                    ))
                };
                let list = other.strip_prefix("cuda:").ok_or_else(unknown)?;
                let mut set = 0u64;
                for ordinal in list.split(',') {
                    let ordinal: u32 = ordinal.trim().parse().map_err(|_| unknown())?;
                    if ordinal >= 64 {
                        return Err(unknown());
                    }
                    set |= 1 << ordinal;
                }
                Ok(if set.count_ones() == 1 {
                    Self::Cuda(set.trailing_zeros() as usize)
                } else {
                    Self::CudaSet(set)
                })
            }
        }
    }
}

impl DeviceSpec {
    /// One spec per model replica: the GPUs of a set, else the spec itself.
    pub fn replicas(self) -> Vec<DeviceSpec> {
        match self {
            Self::CudaSet(set) => (0..64).filter(|n| set & (1 << n) != 0).map(Self::Cuda).collect(),
            single => vec![single],
        }
    }

    /// The GPU a single-device step (index build, recall check) should use, if any.
    pub fn first_gpu(self) -> Option<usize> {
        match self {
            Self::Cpu => None,
            Self::Auto => Some(0),
            Self::Cuda(ordinal) => Some(ordinal),
            Self::CudaSet(set) => Some(set.trailing_zeros() as usize),
        }
    }

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
            Self::CudaSet(_) => Err(IndexerError::Device("a set of GPUs runs one model replica per GPU: load it with embed::load_embedder".into())),
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
        let set = "cuda:0, 2".parse::<DeviceSpec>().unwrap();
        assert_eq!(set, DeviceSpec::CudaSet(0b101));
        assert_eq!(set.replicas(), [DeviceSpec::Cuda(0), DeviceSpec::Cuda(2)]);
        assert_eq!(set.first_gpu(), Some(0));
        assert_eq!("cuda:3,3".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(3));
        assert!("cuda:0,x".parse::<DeviceSpec>().is_err());
        assert!("cuda:64".parse::<DeviceSpec>().is_err());
        assert_eq!(DeviceSpec::Cpu.first_gpu(), None);
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_is_a_clear_error() {
        let err = DeviceSpec::Cuda(0).resolve().unwrap_err().to_string();
        assert!(err.contains("built without CUDA support"), "{err}");
        assert!(matches!(DeviceSpec::Auto.resolve().unwrap(), candle_core::Device::Cpu));
    }
}
