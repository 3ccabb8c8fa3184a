//! Small helpers with no protocol meaning: the stable hash and the injected random source.

pub mod hash;
pub mod random;
