//! Wire types only: what crosses the network, in the protocol's own words.
//!
//! Nothing here does IO or keeps state. The reducers in [`crate::reduce`] and the store in
//! [`crate::store`] give these types their meaning.

pub mod capabilities;
pub mod chunk;
pub mod compact;
pub mod error;
pub mod json;
pub mod message;
pub mod part;
#[cfg(feature = "pi")]
pub mod pi_native;
pub mod request;
pub mod schema;
pub mod waiting;

pub use capabilities::Capabilities;
pub use compact::Json;
pub use error::{ChatError, ErrorKind};
pub use message::{FileAttachment, Part, Role, TextState, ToolPart, ToolState, UIMessage};
pub use request::SendOptions;
pub use waiting::{Approval, Question};
