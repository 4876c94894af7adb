//! The graph build's choices below the index's own parameters: how many k-means lists a
//! row's kNN list is searched in, and how its links are pruned. A run builds with the
//! defaults; `quarry bench-hnsw-build --graph-variants` compares others.

use quarry_kernels::MAX_NEAREST_CENTROIDS;

use super::knn_lists;

/// How a row's base links are chosen from its kNN list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphPrune {
    /// CAGRA's rank-based pruning by detour counts (the kernels: the GPU in a `cuda` build
    /// with one), then reverse links: every row keeps `2·M` links.
    #[default]
    Detours,
    /// HNSW's own neighbour heuristic with distances, over the list and then over the kept
    /// links with the reverse ones (on the CPU): rows keep as many links as add a direction.
    Neighbourhood,
}

impl std::str::FromStr for GraphPrune {
    type Err = String;
    fn from_str(name: &str) -> std::result::Result<Self, String> {
        match name {
            "detours" => Ok(Self::Detours),
            "neighbourhood" => Ok(Self::Neighbourhood),
            other => Err(format!("unknown graph pruning `{other}` (detours, neighbourhood)")),
        }
    }
}

impl std::fmt::Display for GraphPrune {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Detours => "detours",
            Self::Neighbourhood => "neighbourhood",
        })
    }
}

/// The graph build's choices below the index's own parameters (a run takes the defaults;
/// `quarry bench-hnsw-build --graph-variants` compares others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GraphBuildOptions {
    /// How many of its nearest k-means lists each row joins ([`knn_lists::MEMBERSHIPS`]):
    /// more finds more of its true neighbours where the data does not split cleanly, at
    /// about the square of the lists' growth in products.
    pub memberships: usize,
    pub prune: GraphPrune,
}

impl Default for GraphBuildOptions {
    fn default() -> Self {
        Self {
            memberships: knn_lists::MEMBERSHIPS,
            prune: GraphPrune::Detours,
        }
    }
}

impl std::str::FromStr for GraphBuildOptions {
    type Err = String;
    /// `MEMBERSHIPS:PRUNE`, as `2:detours` or `3:neighbourhood`.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let (memberships, prune) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}`: expected MEMBERSHIPS:PRUNE, as 2:detours"))?;
        let memberships: usize = memberships
            .parse()
            .map_err(|_| format!("`{text}`: memberships `{memberships}` is not a count"))?;
        if !(1..=MAX_NEAREST_CENTROIDS).contains(&memberships) {
            return Err(format!(
                "`{text}`: each row joins 1 to {MAX_NEAREST_CENTROIDS} lists, not {memberships}"
            ));
        }
        Ok(Self {
            memberships,
            prune: prune.parse()?,
        })
    }
}

impl std::fmt::Display for GraphBuildOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.memberships, self.prune)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_options_read_and_print_as_memberships_and_pruning() {
        assert_eq!(
            GraphBuildOptions::default().to_string(),
            format!("{}:detours", knn_lists::MEMBERSHIPS)
        );
        for text in ["2:detours", "3:neighbourhood", "1:detours", "8:detours"] {
            assert_eq!(text.parse::<GraphBuildOptions>().unwrap().to_string(), text);
        }
        for (bad, says) in [
            ("3", "MEMBERSHIPS:PRUNE"),
            ("0:detours", "joins 1 to 8 lists, not 0"),
            ("9:detours", "joins 1 to 8 lists, not 9"),
            ("x:detours", "not a count"),
            ("2:cagra", "unknown graph pruning `cagra`"),
        ] {
            let error = bad.parse::<GraphBuildOptions>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
