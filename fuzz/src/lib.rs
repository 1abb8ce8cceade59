//! What the fuzz targets share: the invariants and the reading of a fuzz
//! input (`invariants`, a file the core's property tests include too).

pub use _core as fnb;

pub mod invariants;
