//! Drivers that run the pieces without a store or transport: the replay helpers (SPEC §9),
//! used by hosts and by the fixture and differential tests, and the benchmark's scenarios.

#[cfg(feature = "_internal_bench")]
pub mod bench_scenarios;
#[cfg(feature = "replay")]
pub mod replay;
