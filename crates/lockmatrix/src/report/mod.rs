//! What people read: the terminal tables of a run ([`table`]) and the
//! seeds' tables in the shapes their threads used ([`seeds`]).

pub mod seeds;
pub mod table;
