//! The membership simulator: every node of a membership scenario runs a
//! membership agent (`fdlab_protocol::membership`), over the same network,
//! clocks and faults as the detector simulator, with the membership table
//! as a simulated service (SPEC §8).

pub mod outcome;
