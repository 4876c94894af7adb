//! BEIR-format datasets, IR metrics and synthetic corpora (not built yet).
