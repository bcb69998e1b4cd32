//! Lock-RPC channel policies (SPEC §10, "slow is not dead").
pub mod breaker;
pub mod config;
pub mod verdict;
pub mod channel;
pub mod dsync;
pub mod unlock;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
