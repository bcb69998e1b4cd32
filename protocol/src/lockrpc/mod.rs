//! Lock-RPC channel policies (SPEC §10, "slow is not dead").
pub mod breaker;
pub mod config;
pub mod verdict;
pub mod channel;

#[cfg(test)]
mod tests;
